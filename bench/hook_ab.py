"""What gpuprof's PyTorch hooks cost a real training step, measured in one
process: the hooks are installed and removed in turns (A/B/C..., several
rounds), so that process-to-process noise (several % on the GPU machine)
does not hide a 1% effect. Run plainly (NVTX calls then go nowhere) or under
`gpuprof --trace --mode native` (the recorder takes every NVTX call).
  hook_ab.py [--model gpt2|resnet50] [--rounds R] [--steps S] [VARIANT...]
VARIANT: none, or a comma list of fwd, bwd, phase, and nomem (no
gpuprof:torch.memory marks); default: none fwd,bwd,phase fwd fwd,bwd.
Prints one HOOK_AB line per variant: the median step (ms), its difference
from the first variant, and the median host time to queue a step and CPU
time of the main thread."""
import argparse
import os
import statistics
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "torch"))
sys.path.insert(0, os.path.join(here, "..", "profiler", "python"))
import train_models  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="gpt2")
ap.add_argument("--rounds", type=int, default=4)
ap.add_argument("--steps", type=int, default=6)
ap.add_argument("variants", nargs="*", default=["none", "fwd,bwd,phase", "fwd", "fwd,bwd"])
a = ap.parse_args()

step = train_models.build(a.model)
import gpuprof_torch  # noqa: E402  (installs itself now that torch is imported)

hooks = gpuprof_torch._hooks
if hooks is None:
    raise SystemExit("gpuprof's hooks did not install")
hooks.uninstall()
times = {v: [] for v in a.variants}
queue = {v: [] for v in a.variants}
cpu = {v: [] for v in a.variants}
for r in range(a.rounds):
    for v in a.variants:
        h = None
        if v != "none":
            h = gpuprof_torch._Hooks(torch, set(v.split(",")))
            h.announced = True
            h.step = hooks.step
            if "nomem" in v.split(","):
                h.memory_marks = False
            h.install()
        for _ in range(2):
            step()
        torch.cuda.synchronize()
        for _ in range(a.steps):
            c0 = time.thread_time()
            t0 = time.perf_counter()
            step()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            times[v].append((time.perf_counter() - t0) * 1000.0)
            queue[v].append((t1 - t0) * 1000.0)
            cpu[v].append((time.thread_time() - c0) * 1000.0)
        if h is not None:
            hooks.step = h.step
            h.uninstall()
base = statistics.median(times[a.variants[0]])
for v in a.variants:
    m = statistics.median(times[v])
    print("HOOK_AB model=%s variant=%s median_ms=%.3f delta_ms=%+.3f delta_pct=%+.2f queue_ms=%.1f "
          "cpu_ms=%.1f n=%d" % (a.model, v, m, m - base, (m / base - 1) * 100,
                                statistics.median(queue[v]), statistics.median(cpu[v]), len(times[v])),
          flush=True)
