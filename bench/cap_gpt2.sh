#!/usr/bin/env bash
# The default trace's size cap on GPT-2 small (bench/flight_gpt2.py), one
# GPU: STEPS steps (default 1000) under --trace-cap CAP (default 100MB,
# reached near step 550 at about 0.18 MB a step), a whole-device request
# caught at step OOM_AT (default 900, after the cap). Prints what each file
# holds against what the program measured: the start's steps and peak, the
# outline's steps and the run's peak (max_memory_allocated()), the
# out-of-memory dump and how long it took, the steps' times around the cap.
#   bash bench/cap_gpt2.sh GPUPROF OUTDIR
set -u
G=$1 OUTD=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUTD" && cd "$OUTD" || exit 1
rm -f cap.*json.gz
STEPS=${STEPS:-1000} CAP=${CAP:-100MB} OOM_AT=${OOM_AT:-900}
t0=$(date +%s%N)
DUMP_GLOB="$OUTD/cap.dump[1-9]*.json.gz" "$G" --trace -f --trace-cap "$CAP" -o cap.json.gz -- \
	python3 "$here/flight_gpt2.py" cap.res --steps "$STEPS" --oom-at "$OOM_AT" > cap.out 2> cap.err
echo "rc=$? wall_ms=$((($(date +%s%N) - t0) / 1000000))"
grep "size cap" cap.err
# the recorder's own account of the OOM dump: how long it took to write,
# and how long after the error it was whole
grep "flight recorder:.*(oom)" cap.err
for f in cap*.json.gz; do
	n=${f%.json.gz}
	echo "$f: $(stat -c %s "$f") bytes"
	"$G" analyze --json "$f" > "$n.analyze.json" 2> "$n.analyze.err" || echo "analyze $n failed: $(head -c 300 "$n.analyze.err")"
	"$G" analyze "$f" > "$n.analyze.txt" 2>&1
done
python3 - <<'PY'
import gzip, json, statistics
res = json.load(open("cap.res"))
def load(p):
    with gzip.open(p, "rt") as f:
        return json.load(f)
main, start = load("cap.json.gz"), load("cap.dump0.json.gz")
cap = [e["args"] for e in main if e.get("name") == "gpuprof.cap"][0]
print("cap event:", cap)
marks = [int(e["name"][5:]) for e in start if e.get("name", "").startswith("step:")]
print("start: steps %d-%d, reason %s" % (marks[0], marks[-1], start[-2]["args"]["reason"]))
a0 = json.load(open("cap.dump0.analyze.json"))["devices"][0]
a1 = json.load(open("cap.analyze.json"))["devices"][0]
mx = res["max_allocated"]
print("program: %d steps, max_memory_allocated %d" % (res["steps"], mx))
print("start's peak %d (%s)" % (a0["summary"]["allocated"]["peak"], "=" if a0["summary"]["allocated"]["peak"] == mx else "differs"))
o = a1["outline"]
print("outline: %d steps (%d-%d), run's peak %d (%s), dump %s" % (o["steps"], o["first_step"], o["last_step"],
      o["allocated_peak"], "=" if o["allocated_peak"] == mx else "differs", o["dump"]))
ol = [e["args"] for e in main if e.get("name") == "gpuprof.outline" and e["args"]["closed_by"] == "step"]
print("outline step peaks: %d of %d equal max_memory_allocated; the others: %s" % (
    sum(x["allocated_peak"] == mx for x in ol), len(ol), sorted({x["allocated_peak"] for x in ol if x["allocated_peak"] != mx})[:5]))
print("window's peak %d (%s)" % (a1["summary"]["allocated"]["peak"], "=" if a1["summary"]["allocated"]["peak"] == mx else "differs"))
print("oom dump: %s whole %.2f s after the error, as the program saw it (inflating each look as it grew)" % (
    res.get("oom_dump"), res.get("oom_dump_s", float("nan"))))
ms = res["step_ms"]
k = marks[-1]
print("step ms: median %.1f; around the cap (steps %d-%d): %s" % (statistics.median(ms), k - 2, k + 6,
      " ".join("%.1f" % x for x in ms[k - 3:k + 6])))
print("max step ms %.1f at step %d" % (max(ms[5:]), ms.index(max(ms[5:])) + 1))
PY
