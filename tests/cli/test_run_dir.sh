# A run directory (-o RUN/): every process's trace, named by its rank, and
# the launcher's manifest listing its own processes' traces; a second run
# refused unless --force; analyze reads the directory. A program plays
# torchrun and the recorder (trace_tool.py torchrun).
# needs: recorder
. "$(dirname "$0")/lib.sh"
need_python

gp --trace -o run/ -- "$PYTHON" "$HERE/trace_tool.py" torchrun 2
check_rc 0 "torchrun"
check_no_stdout "torchrun"
check_prefixed "torchrun"
check_err "gpuprof: run directory $TMP/run/: 3 traces, one per process that used CUDA:" "torchrun"
check_err "gpuprof: trace cut short; recovered 4 events up to the last flush ($TMP/run/rank1." "rank 1 repaired"
grep -qE "^gpuprof:   rank0\.[0-9]+\.json\.gz \(rank 0 of 2, " err || fail "rank 0 listed"
grep -qE "^gpuprof:   rank1\.[0-9]+\.json\.gz \(rank 1 of 2, " err || fail "rank 1 listed"
grep -qE "^gpuprof:   proc\..+\.[0-9]+\.json\.gz \(" err || fail "the process with no rank listed"
check_no_err "rank7" "another launcher's trace"
check_err "gpuprof: next: gpuprof analyze $TMP/run/" "where to look next"
set -- run/manifest.*.json
[ -f "$1" ] || fail "no manifest"
"$PYTHON" - "$1" <<'PY' || fail "manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["schema"] == "gpuprof.run/1", m
assert m["exit_status"] == 0 and m["command"][-2:] == ["torchrun", "2"], m
ranks = sorted((t.get("rank", -1), t["complete"]) for t in m["traces"])
assert ranks == [(-1, True), (0, True), (1, True)], ranks
assert all(t["file"].endswith(".json.gz") and "/" not in t["file"] for t in m["traces"])
assert "rank7.99999.json.gz" not in [t["file"] for t in m["traces"]]
PY

# analyze takes the directory: the manifest's traces only
"$GPUPROF" analyze --json run/ >an.json 2>an.err
[ $? -eq 0 ] || { fail "analyze run/"; show an.err >&2; }
"$PYTHON" - <<'PY' || fail "analyze run/: the listed traces"
import json
d = json.load(open("an.json"))
assert sorted(t["rank"] if t["rank"] is not None else -1 for t in d["traces"]) == [-1, 0, 1], d["traces"]
PY
grep -q "no manifest lists (rank7.99999.json.gz)" an.err || fail "analyze run/: the unlisted trace said"

# another run into the same directory: refused, then --force clears it
gp --trace -o run/ -- true
check_rc 2 "a directory holding another run"
check_err "gpuprof: $TMP/run holds another run's manifest and traces (--force replaces them, or give a new directory)" "refused"
gp --trace --force -o run/ -- true
check_rc 0 "--force"
n=$(ls run | grep -c '^rank[01]\.') || true
[ "$n" -eq 0 ] || fail "--force left the old run's traces"
[ "$(ls run/manifest.*.json | wc -l)" -eq 1 ] || fail "--force: one manifest, the new run's"
[ ! -e run/rank7.99999.json.gz ] || fail "--force kept a trace named as a run's that no manifest lists"

# default for a launcher: a run directory named after it
mkdir bin && printf '#!/bin/sh\nexit 0\n' >bin/torchrun && chmod +x bin/torchrun
PATH="$TMP/bin:$PATH" gp --trace -- torchrun --nproc-per-node 2 x.py
check_rc 0 "torchrun, default output"
ls -d gpuprof-torchrun-*/ >/dev/null 2>&1 || fail "torchrun: default run directory"
finish
