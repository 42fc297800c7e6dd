"""The host time gpuprof's PyTorch hooks add to a training step, without a
GPU: a GPT-2-shaped model (12 blocks, the same module tree) with tiny CPU
tensors, so that the step is nearly all Python and PyTorch overhead. Variants
take turns; the best of the rounds is printed per variant. NVTX calls go to
stubs unless PyTorch has them.

  hook_cpu.py [--rounds R] [--steps S] [--forward-only] [--count K] VARIANT...

VARIANT: none, or a comma list of the hooks' parts (fwd, bwd, phase) and of
the probes regonly (instead of the backward naming, register a prehook that
does nothing on each module output's node, in the forward) and empty (global
forward pre- and post-hooks that do nothing: what PyTorch's hooked module
call costs by itself). --forward-only times the forward alone (with grad)
and also prints the cost per module call. --count K runs K steps of one
variant and nothing else, to be counted by valgrind: instructions per module
call = (count with K - count with 0) / (K x module calls), module calls 162
a forward of this model. The part fast makes a variant use the compiled
module calls (gpuprof's default; the build's profiler/python must be on
PYTHONPATH), so that both kinds take turns in one process; without it a
variant uses the Python ones, whatever GPUPROF_TORCH_FAST says.

EXAMPLES
  python3 bench/hook_cpu.py none fwd fwd,bwd fwd,bwd,phase fwd,regonly
  python3 bench/hook_cpu.py --forward-only --steps 300 none empty fwd fwd,bwd
  PYTHONPATH=build/profiler/python python3 bench/hook_cpu.py --forward-only \\
      none fwd,bwd fwd,bwd,fast
  PYTHONPATH=build/profiler/python valgrind --tool=cachegrind \\
      --cache-sim=no --cachegrind-out-file=/dev/null \\
      python3 bench/hook_cpu.py --forward-only --count 100 fwd,bwd,fast"""
import argparse
import os
import statistics
import sys
import time
import types

import torch
import torch.nn as nn

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "profiler", "python"))

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--rounds", type=int, default=8)
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--forward-only", action="store_true")
ap.add_argument("--count", type=int, metavar="K")
ap.add_argument("variants", nargs="+")
a = ap.parse_args()
torch.set_num_threads(1)


class Attn(nn.Module):
    def __init__(s, d):
        super().__init__()
        s.c_attn, s.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        s.attn_dropout, s.resid_dropout = nn.Dropout(0.1), nn.Dropout(0.1)

    def forward(s, x):
        q, k, v = s.c_attn(x).chunk(3, -1)
        return s.resid_dropout(s.c_proj(s.attn_dropout(torch.softmax(q @ k.transpose(-1, -2), -1)) @ v))


class MLP(nn.Module):
    def __init__(s, d):
        super().__init__()
        s.c_fc, s.act, s.c_proj, s.dropout = nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(0.1)

    def forward(s, x):
        return s.dropout(s.c_proj(s.act(s.c_fc(x))))


class Block(nn.Module):
    def __init__(s, d):
        super().__init__()
        s.ln_1, s.attn, s.ln_2, s.mlp = nn.LayerNorm(d), Attn(d), nn.LayerNorm(d), MLP(d)

    def forward(s, x):
        x = x + s.attn(s.ln_1(x))
        return (x + s.mlp(s.ln_2(x)),)


class GPT(nn.Module):
    def __init__(s, d=8, n=12):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(100, d), nn.Embedding(16, d)
        s.drop = nn.Dropout(0.1)
        s.h = nn.ModuleList(Block(d) for _ in range(n))
        s.ln_f, s.lm_head = nn.LayerNorm(d), nn.Linear(d, 100, bias=False)

    def forward(s, x):
        h = s.drop(s.wte(x) + s.wpe(torch.arange(x.shape[1])))
        for b in s.h:
            h = b(h)[0]
        return s.lm_head(s.ln_f(h))


if not getattr(getattr(torch._C, "_nvtx", None), "rangePushA", None):
    torch._C._nvtx = types.SimpleNamespace(rangePushA=len, rangePop=int, rangeStartA=len, rangeEnd=abs, markA=len)
import gpuprof_torch  # noqa: E402

model = GPT()
opt = torch.optim.AdamW(model.parameters())
x = torch.randint(0, 100, (1, 4))


def step():
    if a.forward_only:
        model(x)
        return
    loss = model(x).sum()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


base = gpuprof_torch._hooks
if base is not None:
    base.uninstall()


class _Empty:
    """Global forward hooks that do nothing."""

    def install(self):
        mm = torch.nn.modules.module
        self.handles = [mm.register_module_forward_pre_hook(lambda m, i: None),
                        mm.register_module_forward_hook(lambda m, i, o: None)]

    def uninstall(self):
        for h in self.handles:
            h.remove()


def make(v):
    parts = set(v.split(","))
    if parts == {"none"}:
        return None
    if parts == {"empty"}:
        return _Empty()
    h = gpuprof_torch._Hooks(torch, parts & {"fwd", "bwd", "phase"})
    h.announced = True
    h.want_fast = "fast" in parts
    h.memory_marks = False
    if "regonly" in parts:
        h.bwd = True

        def watch(st, m, o):
            t = o[0] if isinstance(o, tuple) else o
            g = getattr(t, "grad_fn", None)
            if g is not None:
                g.register_prehook(_nothing)

        h._watch_backward = watch
    return h


def _nothing(grads):
    return None


def install(h):
    h.install()
    if getattr(h, "want_fast", False) and not h.fast:
        raise SystemExit("hook_cpu.py: a fast variant needs _gpuprof_call: put the build's "
                         "profiler/python on PYTHONPATH")


if a.count is not None:
    # K steps of one variant and nothing else, for an instruction count that
    # the host's noise does not move: run under valgrind with K and with 0
    if len(a.variants) != 1 or a.count < 0:
        raise SystemExit("hook_cpu.py: --count K needs K >= 0 and one variant")
    h = make(a.variants[0])
    if h is not None:
        install(h)
    step()  # names the modules
    for _ in range(a.count):
        step()
    print("HOOK_CPU_COUNT variant=%s steps=%d compiled=%d torch=%s python=%s" % (
        a.variants[0], a.count, int(bool(getattr(h, "fast", False))), torch.__version__,
        sys.version.split()[0]))
    sys.exit(0)

variants = a.variants
best = {v: [] for v in variants}
for r in range(a.rounds):
    for v in variants:
        h = make(v)
        if h is not None:
            install(h)
        for _ in range(5):
            step()
        ts = []
        for _ in range(a.steps):
            t = time.perf_counter()
            step()
            ts.append(time.perf_counter() - t)
        best[v].append(statistics.median(ts) * 1000)
        if h is not None:
            h.uninstall()
calls = [0]
counter = torch.nn.modules.module.register_module_forward_pre_hook(lambda m, i: calls.__setitem__(0, calls[0] + 1))
model(x)
counter.remove()
b = min(best[variants[0]])
for v in variants:
    m = min(best[v])
    print("HOOK_CPU variant=%s step_ms=%.3f delta_ms=%+.3f per_module_call_us=%+.2f module_calls=%d "
          "forward_only=%d torch=%s python=%s" % (
              v, m, m - b, (m - b) * 1000.0 / calls[0], calls[0], a.forward_only, torch.__version__,
              sys.version.split()[0]))
