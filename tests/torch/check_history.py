"""GPU check of --torch-history: `gpuprof analyze` of a native-mode trace
with PyTorch's allocator history against PyTorch's own numbers of the same
run (the GPUPROF_TORCH line of train_models.py, the GPUPROF_TORCH_EXPECT line
of samples/pytorch/fragmentation.py).

  check_history.py GPUPROF TRACE OUT LABEL

train_models: allocated peak = memory_stats' requested_bytes.all.peak exactly
(the history counts requested bytes), reserved peak = max_memory_reserved
within 0.5%, the history complete. fragmentation: the worst reserved -
allocated gap = the story's own worst (sampled after every allocation and
free) within 0.1%. Both: the recorder drew the history as the counter track
"PyTorch history" on GPU 0 (one point per history point, in time order, the
same peak and worst gap), and the samples as "PyTorch sampled" in time order.
Prints one PASS/FAIL line; exit 0 or 1."""
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "exporters"))
from trace_format import EV, F, T  # noqa: E402  (the names of the trace)


def counters(trace, th, al, worst):
    """The counter tracks against the analyzer's reading of the marks."""
    gpu_pid, end = None, {}
    tracks = {EV.TORCH_HISTORY.name: [], EV.TORCH_SAMPLED.name: []}
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        for e in json.load(f):
            if e.get(T.NAME) == EV.META.name:
                gpu_pid = e[T.ARGS][F.GPU_PID_BASE]
            elif e.get(T.NAME) == EV.END.name:
                end = e[T.ARGS]
            elif e.get(T.PH) == "C" and e.get(T.NAME) in tracks:
                tracks[e[T.NAME]].append(e)
    fails = []
    for name, evs in tracks.items():
        if not evs:
            fails.append("no %s counter" % name)
        elif any(e[T.PID] != gpu_pid for e in evs):
            fails.append("%s counter not on GPU 0's process %s" % (name, gpu_pid))
        elif any(b[T.TS] < a[T.TS] for a, b in zip(evs, evs[1:])):
            fails.append("%s counter not in time order" % name)
    drawn = sum(len(v) for v in tracks.values())
    counts = (end.get(F.TORCH_POINTS), end.get(F.TORCH_POINTS_LEFT_OUT), end.get(F.TORCH_MARKS_UNREAD))
    if counts != (drawn, 0, 0):
        fails.append("%s torch_points %s, left out %s, unread %s; %d drawn" % ((EV.END.name,) + counts + (drawn,)))
    h = tracks[EV.TORCH_HISTORY.name]
    if h:
        if len(h) != th.get("points"):
            fails.append("%d history counter points vs %s points read" % (len(h), th.get("points")))
        peak = max(e[T.ARGS][F.ALLOCATED] for e in h)
        gap = max(e[T.ARGS][F.RESERVED] - e[T.ARGS][F.ALLOCATED] for e in h)
        if al["source"] == "torch history" and peak != al["peak"]:
            fails.append("history counter peak %d vs analyze's %d" % (peak, al["peak"]))
        if gap != worst:
            fails.append("history counter worst gap %d vs analyze's %d" % (gap, worst))
    else:
        fails.append("no PyTorch history counter in the trace: nothing to check")
    return fails


def main():
    gp, trace, out, label = sys.argv[1:5]
    exp = {}
    for line in open(out):
        if line.startswith(("GPUPROF_TORCH ", "GPUPROF_TORCH_EXPECT ")):
            exp = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
    p = subprocess.run([gp, "analyze", "--json", trace], capture_output=True, text=True)
    if p.returncode != 0 or not exp:
        print("FAIL history %s: analyze exit %d %s; expected line %s" % (
            label, p.returncode, p.stderr.strip()[-200:], bool(exp)))
        return 1
    doc = json.loads(p.stdout)
    d = doc["devices"][0]
    s = d["summary"]
    al, fr = s["allocated"], s["fragmentation"]
    th = doc["traces"][0]["torch_history"] or {}
    fails = []
    if al["source"] != "torch history" or fr.get("source") != "torch history":
        fails.append("sources %s/%s" % (al["source"], fr.get("source")))
    if not th.get("complete"):
        fails.append("history not complete: %s" % th)
    worst = (fr.get("worst") or {}).get("gap", 0)
    fails += counters(trace, th, al, worst)
    if "max_requested" in exp:
        if al["peak"] != int(exp["max_requested"]):
            fails.append("allocated peak %s != requested_bytes.all.peak %s" % (al["peak"], exp["max_requested"]))
        res = s["reserved"]["peak"] or 0
        if abs(res - int(exp["max_reserved"])) > 0.005 * int(exp["max_reserved"]):
            fails.append("reserved peak %d vs max_memory_reserved %s" % (res, exp["max_reserved"]))
        what = "allocated peak %d = requested peak; max_memory_allocated %s" % (al["peak"], exp["max_allocated"])
    else:
        want = int(exp["worst_gap"])
        if want <= 0:
            fails.append("the story saw no gap (worst_gap %d): no fragmentation to check" % want)
        elif worst <= 0:
            fails.append("no fragmentation found; the story's worst gap was %d" % want)
        elif abs(worst - want) > 0.001 * want:
            fails.append("worst gap %d vs the story's %d" % (worst, want))
        what = "worst gap %d (story %d)" % (worst, want)
    pk = fr.get("at_peak") or {}
    print("%s history %s: %s; %d points in %d marks; worst gap %.2f GiB at %s s, step %s, %s; "
          "at the reserved peak %.2f of %.2f GiB unused at %s s, step %s, %s%s" % (
              "FAIL" if fails else "PASS", label, what, th.get("points", 0), th.get("marks", 0),
              worst / 2**30, (fr.get("worst") or {}).get("t"), (fr.get("worst") or {}).get("step"),
              (fr.get("worst") or {}).get("phase"), pk.get("gap", 0) / 2**30,
              pk.get("reserved", 0) / 2**30, pk.get("t"), pk.get("step"), pk.get("phase"),
              ("; " + "; ".join(fails)) if fails else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
