"""Checks a trace of nvtx_torch.py: the torch.cuda.nvtx ranges are there,
nested as opened, and emit_nvtx's aten ranges arrived. Exit 0/1."""
import gzip
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "exporters"))
from trace_format import CAT, T  # noqa: E402  (the names of the trace)


def main():
    trace, out = sys.argv[1], sys.argv[2]
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        events = json.load(f)
    expect = dict(kv.split("=") for kv in open(out).read().split("GPUPROF_TORCH_NVTX")[1].split())
    per_tid = defaultdict(list)
    starts, ends, marks = {}, {}, 0
    for i, e in enumerate(events):
        if e.get(T.CAT) != CAT.NVTX:
            continue
        if e[T.PH] in "BE":
            per_tid[e[T.TID]].append((e[T.TS], i, e))
        elif e[T.PH] == "b":
            starts[e[T.ID]] = e
        elif e[T.PH] == "e":
            ends[e[T.ID]] = e
        elif e[T.PH] == "i":
            marks += 1
    names, aten, ok = [], 0, True
    for tid, evs in per_tid.items():
        stack = []
        for _, _, e in sorted(evs, key=lambda t: (t[0], t[1])):
            if e[T.PH] == "B":
                stack.append(e[T.NAME])
                names.append(e[T.NAME])
                aten += e[T.NAME].startswith("aten::")
            elif not stack:
                print(f"FAIL unbalanced pop on tid {tid}")
                ok = False
            else:
                stack.pop()
        if stack:
            print(f"FAIL tid {tid} left open: {stack[-3:]}")
            ok = False
    steps = [n for n in names if n.startswith("step")]
    inner = names.count("inner")
    se = [s for s in starts.values() if s[T.NAME] == "startend"]
    print(f"torch nvtx: steps={len(steps)} inner={inner} aten_ranges={aten} start_end={len(se)} "
          f"matched_end={sum(1 for s in se if s[T.ID] in ends)} marks={marks}")
    ok &= len(steps) == 3 and inner == 3 and aten >= 4 and len(se) == 1 and marks >= 1
    ok &= all(s[T.ID] in ends for s in se)
    ok &= int(expect["pushes"]) == len(steps) + inner
    print("RESULT torch_nvtx", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
