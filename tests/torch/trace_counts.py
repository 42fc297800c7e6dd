"""Counts in a gpuprof trace, one line for the GPU suite's table
(tests/run_gpu_suite.sh).

  trace_counts.py clash TRACE
      a trace of profiler_clash.py: it reads as JSON; its events, last
      event's name, kernels and allocations.
  trace_counts.py bench TRACE
      a trace of bench/overhead.sh: its size, events, kernels, allocations,
      NVTX events, what was dropped, late memory records, and one line per
      change in how stream-ordered allocations were captured.

A trace that does not read fails with Python's error (exit 1)."""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "exporters"))
from trace_format import CAT, EV, F, T  # noqa: E402  (the names of the trace)


def count(ev, pred):
    return sum(1 for e in ev if pred(e))


def clash(path, ev):
    end = ev[-1]
    print("clash trace: valid json, events=%d end=%s kernels=%d allocs=%d" % (
        len(ev), end.get(T.NAME), count(ev, lambda e: e.get(T.CAT) == CAT.KERNEL),
        count(ev, lambda e: e.get(T.NAME) == EV.ALLOC.name)))


def bench(path, ev):
    end = ev[-1][T.ARGS]
    print("bench trace %s: %.1f MiB, events=%d kernels=%d allocs=%d nvtx=%d dropped=%s/%s late=%s" % (
        os.path.basename(path), os.path.getsize(path) / 2**20, len(ev),
        count(ev, lambda e: e.get(T.CAT) == CAT.KERNEL), count(ev, lambda e: e.get(T.NAME) == EV.ALLOC.name),
        count(ev, lambda e: e.get(T.CAT) == CAT.NVTX),
        end.get(F.DROPPED_CUPTI), end.get(F.DROPPED_HOST), end.get(F.LATE_MEMORY_RECORDS)))
    for e in ev:
        if e.get(T.NAME) == EV.ALLOC_CAPTURE.name:
            print("  alloc capture at %.0f ms: %s" % (e[T.TS] / 1000, e[T.ARGS]))


def main():
    report = {"clash": clash, "bench": bench}
    if len(sys.argv) != 3 or sys.argv[1] not in report:
        sys.stderr.write("usage: trace_counts.py clash|bench TRACE\n")
        return 2
    path = sys.argv[2]
    with gzip.open(path, "rt") as f:
        ev = json.load(f)
    report[sys.argv[1]](path, ev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
