"""What gpuprof costs a real training step, part by part, measured in one
process: variants (hooks installed or not, recorder parts on or off) take
turns for several rounds, so that process-to-process noise (1-2% per run on
the hosts in bench/RESULTS.md) does not hide a 1% effect.

  hook_ab.py [--model gpt2|resnet50] [--rounds R] [--steps S] [VARIANT...]

VARIANT is HOOKS or HOOKS@REC.
  HOOKS: none, or a comma list of fwd, bwd, phase, nomem (no
         gpuprof:torch.memory marks) and fast (the compiled module calls,
         gpuprof's default; without it the Python ones, whatever
         GPUPROF_TORCH_FAST says).
  REC:   what the recorder records during the variant, GPUPROF_RECORD's names
         plus memory and none (e.g. none, memory, memory,kernels, all,memory);
         needs `gpuprof --trace` (it calls gpuprof_bench_record in the
         injected library). Without @REC the recorder is left as it started.
         In tensor mode leave out `all` and `pools`: once CUPTI's pool
         records were off, CUPTI 13.0 did not record stream-ordered
         allocations again (bench/launch_cost.py). And a variant without
         `memory` (e.g. none) switches CUPTI's memory records off and on,
         after which CUPTI writes them all again (skipped by the decoder,
         paid by the program (CUPTI 13.0); the recorder
         now switches pool records on and off after it, as at its start,
         and gpuprof.end's skipped_memory_records says whether that kept
         CUPTI quiet). In tensor mode CUPTI's memory records are on only
         with `statics` (module globals) beside `memory`. And what CUPTI
         set up for kernels stays while they are off: the standalone
         recorder's cost is bench/overhead.sh's.
The first variant is the base; each round starts one variant later than the
one before (the order rotates). Default: none fwd,bwd,phase fwd fwd,bwd.

Prints one HOOK_AB line per variant: the median step (ms) over all its steps,
the difference from the base, the median and range of the per-round
differences (each round's median against the base's in the same round), and
the 90th percentile and slowest step, the median host time to queue a step
and the main thread's CPU time until then, the median host time to queue its
forward, backward and optimizer step (fwd_ms, bwd_ms, opt_ms), and the
garbage collections per step and their time.

EXAMPLES
  # hooks alone, the recorder taking every NVTX call
  gpuprof --trace --mode native -o t.json.gz bench/hook_ab.py none fwd,bwd,phase
  # the compiled module calls against the Python ones
  gpuprof --trace --mode native -o t.json.gz bench/hook_ab.py none fwd,bwd,phase \\
      fwd,bwd,phase,fast
  # the recorder's parts: idle, memory only, everything; then with the hooks
  gpuprof --trace --mode native -o t.json.gz bench/hook_ab.py \\
      none@none none@memory none@all,memory fwd,bwd,phase@all,memory"""
import argparse
import ctypes
import gc
import os
import statistics
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "torch"))
sys.path.insert(0, os.path.join(here, "..", "profiler", "python"))
import train_models  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--model", default="gpt2")
ap.add_argument("--rounds", type=int, default=4)
ap.add_argument("--steps", type=int, default=6)
ap.add_argument("variants", nargs="*", default=["none", "fwd,bwd,phase", "fwd", "fwd,bwd"])
a = ap.parse_args()
if a.rounds < 1 or a.steps < 1:
    raise SystemExit("hook_ab.py: --rounds and --steps must be at least 1")

record = None
if any("@" in v for v in a.variants):
    lib = os.environ.get("CUDA_INJECTION64_PATH")
    if not lib:
        raise SystemExit("hook_ab.py: a variant with @REC needs `gpuprof --trace`")
    record = ctypes.CDLL(lib).gpuprof_bench_record
    record.argtypes = [ctypes.c_char_p]
    record.restype = ctypes.c_int

marks = []  # host times when the step's forward and backward were queued
step = train_models.build(a.model, marks)
import gpuprof_torch  # noqa: E402  (installs itself now that torch is imported)

hooks = gpuprof_torch._hooks
if hooks is None:
    raise SystemExit("gpuprof's hooks did not install")
hooks.uninstall()

gc_now = {"ms": 0.0, "n": 0, "t0": 0.0}


def _gc_watch(phase, info):
    # time the program's garbage collections take: a hook that makes
    # garbage can cost its time there
    if phase == "start":
        gc_now["t0"] = time.perf_counter()
    else:
        gc_now["ms"] += (time.perf_counter() - gc_now["t0"]) * 1000.0
        gc_now["n"] += 1


gc.callbacks.append(_gc_watch)
gc_ms = {v: 0.0 for v in a.variants}
gc_n = {v: 0 for v in a.variants}
times = {v: [] for v in a.variants}
rounds = {v: [] for v in a.variants}  # each round's median
queue = {v: [] for v in a.variants}
cpu = {v: [] for v in a.variants}
phases = {v: ([], [], []) for v in a.variants}  # host ms: forward, backward, optimizer
for r in range(a.rounds):
    # each round starts one variant later: a GPU that warms up or slows down
    # within a round (clocks, power) does not favour the first variant
    k = r % len(a.variants)
    for v in a.variants[k:] + a.variants[:k]:
        hook_parts, _, rec = v.partition("@")
        if rec:
            err = record(rec.encode())
            if err != 0:
                raise SystemExit("hook_ab.py: gpuprof_bench_record(%s) failed: %d" % (rec, err))
        h = None
        if hook_parts != "none":
            h = gpuprof_torch._Hooks(torch, set(hook_parts.split(",")))
            h.announced = True
            h.step = hooks.step
            if "nomem" in hook_parts.split(","):
                h.memory_marks = False
            h.want_fast = "fast" in hook_parts.split(",")
            h.install()
            if h.want_fast and not h.fast:
                raise SystemExit("hook_ab.py: variant %s: the compiled module calls are not "
                                 "available (run it under gpuprof --trace, or put the build's "
                                 "profiler/python on PYTHONPATH)" % v)
        for _ in range(2):
            step()
        torch.cuda.synchronize()
        mine = []
        gc_now["ms"], gc_now["n"] = 0.0, 0
        for _ in range(a.steps):
            t0 = time.perf_counter()
            total, queued, on_cpu = train_models.timed_step(step)
            split = train_models.phase_ms(marks, t0, queued)
            for into, ms in zip(phases[v], split or ()):
                into.append(ms)
            mine.append(total)
            queue[v].append(queued)
            cpu[v].append(on_cpu)
        times[v] += mine
        gc_ms[v] += gc_now["ms"]
        gc_n[v] += gc_now["n"]
        rounds[v].append(statistics.median(mine))
        if h is not None:
            hooks.step = h.step
            h.uninstall()
if record is not None:
    record(b"all,memory")
b = a.variants[0]
base = statistics.median(times[b])
for v in a.variants:
    m = statistics.median(times[v])
    per_round = [(x / y - 1) * 100 for x, y in zip(rounds[v], rounds[b])]
    print("HOOK_AB model=%s variant=%s median_ms=%.3f delta_ms=%+.3f delta_pct=%+.2f "
          "round_pct=%+.2f round_min=%+.2f round_max=%+.2f p90_ms=%.2f max_ms=%.2f queue_ms=%.1f "
          "cpu_ms=%.1f fwd_ms=%.2f bwd_ms=%.2f opt_ms=%.2f gc_per_step=%.2f gc_ms_per_step=%.3f n=%d" % (
              a.model, v, m, m - base, (m / base - 1) * 100, statistics.median(per_round),
              min(per_round), max(per_round), sorted(times[v])[int(0.9 * (len(times[v]) - 1))],
              max(times[v]), statistics.median(queue[v]), statistics.median(cpu[v]),
              *(statistics.median(p) if p else 0.0 for p in phases[v]),
              gc_n[v] / len(times[v]), gc_ms[v] / len(times[v]), len(times[v])), flush=True)
