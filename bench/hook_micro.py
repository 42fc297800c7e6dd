"""What each piece of gpuprof's PyTorch hooks costs, CPU-bound: a forward and
backward through 200 tiny Linear modules, microseconds per module (best of 9).
Run it plainly (NVTX calls are no-ops without a tool) and under gpuprof.
  hook_micro.py VARIANT [--device cuda|cpu]
VARIANT: plain | noop-hooks (global hooks that do nothing) | prehook (a
grad_fn prehook per module output) | gpuprof[:fwd,bwd,phase] (gpuprof's
hooks, profiler/python/gpuprof_torch.py, installed here)"""
import os
import sys
import time

import torch

variant = sys.argv[1]
dev = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--device" else "cuda"
mm = torch.nn.modules.module


def nothing(*a):
    return None


if variant == "noop-hooks":
    mm.register_module_forward_pre_hook(nothing)
    mm.register_module_forward_hook(nothing)
elif variant == "prehook":
    def watch(m, a, o):
        o.grad_fn.register_prehook(nothing)
    mm.register_module_forward_hook(watch)
elif variant.startswith("gpuprof"):
    if ":" in variant:
        os.environ["GPUPROF_TORCH_HOOKS"] = variant.split(":", 1)[1]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "profiler", "python"))
    if "gpuprof_torch" not in sys.modules:
        import gpuprof_torch  # noqa: F401  (installs itself: torch is imported)
elif variant != "plain":
    raise SystemExit("unknown variant " + variant)

model = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(200)]).to(dev)
x = torch.randn(4, 8, device=dev, requires_grad=True)


def run(n):
    for _ in range(n):
        model(x).sum().backward()
    if dev == "cuda":
        torch.cuda.synchronize()


run(5)
best = 1e9
for _ in range(9):
    t0 = time.perf_counter()
    run(20)
    best = min(best, time.perf_counter() - t0)
print("HOOK_MICRO variant=%s device=%s us_per_module=%.2f" % (variant, dev, best / 20 / 200 * 1e6), flush=True)
