"""What each piece of the hooks' work per module call costs on this host, in
µs: the Python and PyTorch calls the module-call wrapper and its backward
note make (gpuprof_torch.py, _Hooks._python_call and _watch_backward), each
timed alone in a loop. It says which of them a compiled wrapper would save
and which it would still pay (the PyTorch calls themselves).

  hook_pieces.py [--device cuda|cpu] [--number N]

Prints a HOOK_PIECES line with the versions of Python and PyTorch, one
HOOK_PIECE line per piece (best of 5 repeats of N calls; module calls are of
an nn.Identity), then first_grad_fn (reading a new output's grad_fn once,
which makes its Python object), wrapper_extra (what one Python wrapper
around nn.Module.__call__ adds to a module call), register_prehook and
prehook_called (a backward prehook per node: registering it, and the engine
calling it, on a chain of 200 nodes; best of 20) and, on a GPU,
cuda_memory_stats (one torch._C._cuda_memoryStats call: native mode's
memory mark). NVTX calls go to PyTorch's stubs unless a
tool (gpuprof) is attached.

EXAMPLES
  python3 bench/hook_pieces.py                    # with an NVIDIA GPU
  python3 bench/hook_pieces.py --device cpu       # anywhere with PyTorch
  gpuprof --trace --mode native -o t.json.gz bench/hook_pieces.py  # NVTX recorded"""
import argparse
import sys
import threading
import time
import timeit

import torch

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
ap.add_argument("--number", type=int, default=100000)
a = ap.parse_args()
if a.number < 1:
    raise SystemExit("hook_pieces.py: --number must be at least 1")

leaf = torch.randn(4, device=a.device, requires_grad=True)
y = leaf * 2
g = y.grad_fn
lin = torch.nn.Identity()  # a module call with (nearly) nothing inside
x = y
tls = threading.local()
tls.s = object()
names = {id(lin): "transformer.h.0.mlp.c_fc"}
nvtx = getattr(torch._C, "_nvtx", None)
compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)


def nothing():
    pass


def wrapped(module, *args, **kwargs):
    return orig(module, *args, **kwargs)


orig = torch.nn.Module.__call__
pieces = [
    ("python_call", "nothing()"),
    ("wrapper_frame", "wrapped(lin, x)"),
    ("module_call", "lin(x)"),
    ("grad_fn", "y.grad_fn"),
    ("is_grad_enabled", "torch.is_grad_enabled()"),
    ("tls_get", "tls.s"),
    ("name_lookup", "names.get(id(lin))"),
    ("tensor_type_check", "type(y) is torch.Tensor"),
]
if hasattr(g, "_sequence_nr"):
    pieces.append(("sequence_nr", "g._sequence_nr()"))
else:
    pieces.append(("node_metadata", "g.metadata"))
if compiling is not None:
    pieces.append(("is_compiling", "compiling()"))
if nvtx is not None:
    pieces.append(("nvtx_push_pop", "nvtx.rangePushA('transformer.h.0.mlp.c_fc'); nvtx.rangePop()"))

print("HOOK_PIECES python=%s torch=%s device=%s number=%d" % (
    sys.version.split()[0], torch.__version__, a.device, a.number), flush=True)
took = {}
for name, stmt in pieces:
    n = a.number
    took[name] = min(timeit.repeat(stmt, globals=globals(), number=n, repeat=5)) / n * 1e6
    print("HOOK_PIECE %-18s %.3f us" % (name, took[name]), flush=True)
# A new output's node has no Python object yet: the first read of grad_fn
# makes it (what the backward note pays for each module output).
outs = [leaf * 2 for _ in range(min(a.number, 20000))]
t0 = time.perf_counter()
for o in outs:
    o.grad_fn
t1 = time.perf_counter()
for o in outs:
    o
t2 = time.perf_counter()
print("HOOK_PIECE %-18s %.3f us" % ("first_grad_fn", ((t1 - t0) - (t2 - t1)) / len(outs) * 1e6))
print("HOOK_PIECE %-18s %.3f us" % ("wrapper_extra", took["wrapper_frame"] - took["module_call"]))


# A backward prehook per module output (gpuprof's backward naming): what
# registering one costs, and what the engine pays to call one (it wraps the
# gradients for Python), on a chain of CHAIN nodes.
CHAIN = 200


def chain():
    z = leaf
    for _ in range(CHAIN):
        z = z * 1.0
    nodes = []
    g = z.grad_fn
    while g is not None and len(nodes) < CHAIN:
        nodes.append(g)
        nxt = [f for f, _ in g.next_functions if f is not None]
        g = nxt[0] if nxt else None
    return z, nodes


def prehook(grad_outputs):
    return None


def backward_ms(hooked):
    best = reg = None
    for _ in range(20):
        z, nodes = chain()
        t0 = time.perf_counter()
        if hooked:
            for n in nodes:
                n.register_prehook(prehook)
        t1 = time.perf_counter()
        z.sum().backward()
        if a.device == "cuda":
            torch.cuda.synchronize()
        t2 = time.perf_counter()
        best = t2 - t1 if best is None else min(best, t2 - t1)
        reg = t1 - t0 if reg is None else min(reg, t1 - t0)
        leaf.grad = None
    return best, reg


if hasattr(g, "register_prehook"):
    plain, _ = backward_ms(False)
    hooked, reg = backward_ms(True)
    print("HOOK_PIECE %-18s %.3f us" % ("register_prehook", reg / CHAIN * 1e6))
    print("HOOK_PIECE %-18s %.3f us" % ("prehook_called", (hooked - plain) / CHAIN * 1e6))
if a.device == "cuda":
    dev = torch.cuda.current_device()
    n = max(1, a.number // 100)
    t = min(timeit.repeat("torch._C._cuda_memoryStats(dev)", globals=globals(), number=n, repeat=5))
    print("HOOK_PIECE %-18s %.3f us" % ("cuda_memory_stats", t / n * 1e6))
