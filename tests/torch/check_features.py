"""Checks traces of features.py: one trace (the workers never touch CUDA),
modules named (fwd:blocks.N.ff.0 ... and bwd:), checkpointed blocks'
forward seen again inside backward, steps numbered 1..N, and with --compile
whatever names survive compilation are reported. Exit 0/1."""
import glob
import gzip
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "exporters"))
from trace_format import CAT, T  # noqa: E402  (the names of the trace)


def main():
    trace, out = sys.argv[1], sys.argv[2]
    line = [l for l in open(out) if l.startswith("GPUPROF_FEATURES")]
    kv = dict(w.split("=") for w in line[-1].split()[1:]) if line else {}
    stem = trace[: -len(".json.gz")]
    others = [] if "--quiet-extra" in sys.argv else glob.glob(stem + ".*.json.gz")
    ev = json.load(gzip.open(trace, "rt"))
    names = Counter()
    steps = []
    fwd_in_bwd = 0
    bwd_open = {}
    for e in sorted(ev, key=lambda e: e.get(T.TS, 0)):
        if e.get(T.CAT) != CAT.NVTX:
            continue
        n = e.get(T.NAME, "")
        if e[T.PH] == "B":
            names[n.split(":")[0]] += 1
            if n.startswith("fwd:blocks.0") and any(t == e[T.TID] for t in bwd_open.values()):
                fwd_in_bwd += 1
        elif e[T.PH] == "b" and n.startswith("bwd:"):
            names["bwd"] += 1
            bwd_open[e[T.ID]] = e[T.TID]
        elif e[T.PH] == "e":
            bwd_open.pop(e.get(T.ID), None)
        elif e[T.PH] == "i" and n.startswith("step:"):
            steps.append(int(n.split(":")[1]))
    compiled = kv.get("compile") == "1"
    # a run that took no step has nothing to check: it fails
    ok = kv.get("ok") == "1" and int(kv.get("steps", 0)) > 0 and \
        steps == list(range(1, int(kv.get("steps", 0)) + 1))
    if not compiled:
        ok &= names["fwd"] > 0 and names["bwd"] > 0 and fwd_in_bwd > 0
    print("RESULT features compile=%s workers=%s start=%s %s steps=%s fwd=%d bwd=%d phase=%d "
          "recomputed_fwd_in_bwd=%d extra_traces=%d" % (
              kv.get("compile"), kv.get("workers"), kv.get("start"), "PASS" if ok else "FAIL",
              steps[-3:], names["fwd"], names["bwd"], names["phase"], fwd_in_bwd, len(others)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
