"""Where the GPU waits for the host in a traced PyTorch program: from a
gpuprof trace, the time between training steps ("step:N" marks) in which no
kernel, copy or set ran on the GPU, split by the phase the host was in
(forward = before phase:backward, backward, optimizer.step, zero_grad,
other). Host overhead (Python hooks, the recorder) costs step time only where
the GPU waits; this says where that is.

  gpu_idle.py TRACE.json.gz [--skip N]

Prints one GPU_IDLE line per phase: idle ms per step, and the step's median
length and GPU busy time."""
import argparse
import bisect
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exporters"))
from trace_format import CAT, T  # noqa: E402  (the names of the trace)

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("trace")
ap.add_argument("--skip", type=int, default=3, help="steps to leave out at the start (warm-up)")
ap.add_argument("--min-gap-us", type=float, default=10.0,
                help="shorter gaps between GPU work are the GPU's own, not waits for the host")
a = ap.parse_args()


def fail(msg):
    sys.stderr.write("gpu_idle.py: %s: %s\n" % (a.trace, msg))
    sys.exit(2)


try:
    with gzip.open(a.trace, "rt") if a.trace.endswith(".gz") else open(a.trace) as f:
        text = f.read().rstrip().rstrip(",")
    ev = json.loads(text if text.endswith("]") else text + "]")
except (OSError, EOFError, ValueError) as e:
    fail("not a readable trace (%s)" % e)
if not isinstance(ev, list) or not all(isinstance(e, dict) for e in ev):
    fail("not a trace: a JSON array of events was expected")

busy = []  # (start, end) in us of GPU work
steps = []  # ts of step:N marks
phases = []  # (start, end, name)
open_phase = {}
for e in ev:
    ph, cat, name = e.get(T.PH), e.get(T.CAT), e.get(T.NAME, "")
    if not isinstance(e.get(T.TS), (int, float)) or not isinstance(name, str):
        continue  # metadata events; anything else malformed is not counted
    if ph == "X" and cat in (CAT.KERNEL, CAT.MEMCPY, CAT.MEMSET):
        dur = e.get(T.DUR, 0)
        busy.append((e[T.TS], e[T.TS] + (dur if isinstance(dur, (int, float)) else 0)))
    elif ph == "i" and name.startswith("step:"):
        steps.append(e[T.TS])
    elif ph == "B" and name.startswith("phase:"):
        open_phase.setdefault(e[T.TID], []).append((e[T.TS], name[6:]))
    elif ph == "E" and open_phase.get(e.get(T.TID)):
        t0, n = open_phase[e[T.TID]].pop()
        phases.append((t0, e[T.TS], n))
if len(steps) < a.skip + 2 or not busy:
    raise SystemExit("gpu_idle.py: %d steps, %d GPU events: not enough" % (len(steps), len(busy)))
busy.sort()
merged = []
for s, t in busy:
    if merged and s <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], t)
    else:
        merged.append([s, t])
starts = [m[0] for m in merged]
phases.sort()


def phase_at(t, lo, hi):
    # the phase range holding t within one step; forward before the backward
    for s, e, n in phases:
        if s > hi:
            break
        if s <= t < e and s >= lo:
            return n
    for s, e, n in phases:
        if lo <= s <= hi and n == "backward":
            return "forward" if t < s else "other"
    return "other"


idle = {}
lengths, busy_ms = [], []
steps = steps[a.skip:]
for lo, hi in zip(steps, steps[1:]):
    lengths.append((hi - lo) / 1000)
    i = max(bisect.bisect_right(starts, lo) - 1, 0)
    t = lo
    b = 0.0
    per = {}
    while i < len(merged) and merged[i][0] < hi:
        s, e = max(merged[i][0], lo), min(merged[i][1], hi)
        if e > s:
            if s - t >= a.min_gap_us:
                n = phase_at((t + s) / 2, lo, hi)
                per[n] = per.get(n, 0) + (s - t)
            b += e - s
            t = max(t, e)
        i += 1
    if hi - t >= a.min_gap_us:
        n = phase_at((t + hi) / 2, lo, hi)
        per[n] = per.get(n, 0) + (hi - t)
    busy_ms.append(b / 1000)
    for n, v in per.items():
        idle.setdefault(n, []).append(v / 1000)
k = len(lengths)
print("GPU_IDLE steps=%d step_ms=%.2f busy_ms=%.2f not_busy_ms=%.2f (gaps of %g us or more below)" % (
    k, statistics.median(lengths), statistics.median(busy_ms),
    statistics.median(lengths) - statistics.median(busy_ms), a.min_gap_us))
for n in sorted(idle, key=lambda n: -sum(idle[n])):
    print("GPU_IDLE phase=%s idle_ms_per_step=%.3f" % (n, sum(idle[n]) / k))
