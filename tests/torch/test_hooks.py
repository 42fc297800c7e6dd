"""Unit test of gpuprof's PyTorch hooks (profiler/python/gpuprof_torch.py)
on the CPU, with NVTX replaced by a recorder of calls: module paths as
named_modules() gives them, forward push/pop nesting, one backward range per
autograd node (innermost module wins), phases and step marks, the memory
marks of native mode (the one at exit in a child process), torch.compile's
wrapper named after the model, and that uninstall() removes everything. Needs only a torch build (any version
with Node.register_prehook); exit 77 (skipped) without torch.
  test_hooks.py"""
import json
import os
import subprocess
import sys

try:
    import torch
except ImportError:
    # CMake's Python may not be the one with torch (Debian's python3-torch
    # belongs to /usr/bin/python3): try that one once
    if os.path.exists("/usr/bin/python3") and not os.environ.get("GPUPROF_TEST_REEXEC"):
        os.environ["GPUPROF_TEST_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__)] + sys.argv[1:])
    print("torch not installed: skipped")
    sys.exit(77)

os.environ["GPUPROF_MODE"] = "native"
os.environ["GPUPROF_TORCH_MEMORY_MS"] = "0"  # no sampler thread here
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "profiler", "python"))

log = []


class FakeNvtx:
    def __init__(self):
        self.next_id = 1

    def rangePushA(self, s):
        log.append(("push", s))
        return 0

    def rangePop(self):
        log.append(("pop",))
        return 0

    def rangeStartA(self, s):
        i = self.next_id
        self.next_id += 1
        log.append(("start", s, i))
        return i

    def rangeEnd(self, i):
        log.append(("end", i))

    def markA(self, s):
        log.append(("mark", s))


torch._C._nvtx = FakeNvtx()
torch._C._cuda_memoryStats = lambda d: {"allocated_bytes": {"all": {"current": 5}},
                                        "reserved_bytes": {"all": {"current": 9}}}
torch.cuda.current_device = lambda: 0

if sys.argv[1:] == ["--exit-child"]:
    # A program that only imports torch and ends: gpuprof's exit handler,
    # registered as the hooks install, runs before this one (atexit runs
    # the last registered first), which prints the marks it wrote.
    import atexit

    atexit.register(lambda: print("EXIT_MARKS " + json.dumps(
        [e[1] for e in log if e[0] == "mark" and e[1].startswith("gpuprof:torch.memory")])))
    torch.cuda.is_initialized = lambda: True
    torch.cuda.device_count = lambda: 1
    import gpuprof_torch  # noqa: E402,F401
    sys.exit(0)

import gpuprof_torch  # noqa: E402  (installs itself: torch is imported)

failures = []
# CTest runs this twice: GPUPROF_TORCH_FAST=0 (torch.hooks) with the Python
# wrapper, =1 (torch.hooks.fast) with the compiled module calls, each of
# which must then be the one in use
want_fast = os.environ.get("GPUPROF_TORCH_FAST")
if want_fast in ("0", "1") and gpuprof_torch._hooks.fast != (want_fast == "1"):
    failures.append("GPUPROF_TORCH_FAST=%s: compiled module calls in use: %s" % (
        want_fast, gpuprof_torch._hooks.fast))


def eq(got, want, what):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


import importlib  # noqa: E402

STEP_HOOKS = hasattr(importlib.import_module("torch.optim.optimizer"), "register_optimizer_step_pre_hook")
if not STEP_HOOKS:
    print("skipped: phase:optimizer.step and the step marks (torch %s has no global optimizer step "
          "hooks; they came with 2.0)" % torch.__version__)
model = torch.nn.Sequential(Block(), Block())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4)
model(x).sum().backward()
if STEP_HOOKS:
    opt.step()
opt.zero_grad()
model.zero_grad()  # nn.Module.zero_grad is a phase too

pushes = [e[1] for e in log if e[0] == "push"]
eq([p for p in pushes if p.startswith("fwd:")],
   ["fwd:<Sequential>", "fwd:0", "fwd:0.a", "fwd:0.b", "fwd:1", "fwd:1.a", "fwd:1.b"],
   "forward ranges, paths as named_modules() gives them")
depth = 0
for e in log:
    depth += {"push": 1, "pop": -1}.get(e[0], 0)
    if depth < 0:
        failures.append("a pop without its push")
eq(depth, 0, "every push popped")
starts = [e for e in log if e[0] == "start"]
eq([e[1] for e in starts], ["bwd:1.b", "bwd:1.a", "bwd:0.b", "bwd:0.a"],
   "backward ranges: one per node, the innermost module, in backward order")
ended = {e[1] for e in log if e[0] == "end"}
eq(sorted(ended), sorted(e[2] for e in starts), "every backward range ended")
eq("phase:backward" in pushes, True, "phase:backward")
eq("phase:zero_grad" in pushes, True, "phase:zero_grad")
marks = [e[1] for e in log if e[0] == "mark"]
announced = [json.loads(m[len("gpuprof:torch "):]) for m in marks if m.startswith("gpuprof:torch {")]
eq(len(announced), 1, "gpuprof:torch announced once")
eq(announced[0].get("compiled_calls") if announced else None, gpuprof_torch._hooks.fast,
   "gpuprof:torch says whether the compiled module calls are in use")
eq('gpuprof:torch.memory {"allocated": 5, "reserved": 9, "device": 0}' in marks, True,
   "native mode: PyTorch's allocated/reserved marked before backward")
if STEP_HOOKS:
    eq("phase:optimizer.step" in pushes, True, "phase:optimizer.step")
    eq("step:1" in marks, True, "step:1 after the first optimizer step")

# The forward only notes the backward hooks; backward registers them. A
# backward that is not wrapped (torch.autograd.grad) still gets them, from the
# outermost output's hook.
log.clear()
out = model(x).sum()
eq([e for e in log if e[0] == "start"], [], "no backward range during the forward")
torch.autograd.grad(out, list(model.parameters()))
eq([e[1] for e in log if e[0] == "start"], ["bwd:1.b", "bwd:1.a", "bwd:0.b", "bwd:0.a"],
   "torch.autograd.grad: backward ranges too")

# A forward whose output is dropped without backward (evaluation with grad
# on): its notes die with its graph at once, no garbage collection needed
# (nothing of gpuprof's keeps the graph alive or makes a cycle through it).
import gc  # noqa: E402

gc.disable()
try:
    out = model(x)
    refs = list(gpuprof_torch._hooks.pending)
    eq(len(refs) >= 1 and refs[-1]() is not None, True, "a forward's notes are pending")
    del out
    eq([r for r in refs if r() is not None], [], "notes freed with their graph, without gc")
finally:
    gc.enable()
out = model(x)
out.sum().backward()
eq([r for r in gpuprof_torch._hooks.pending if r() is not None], [], "backward took every pending note")
del out

# torch.compile's wrapper: named after the model, paths without _orig_mod
class OptimizedModule(torch.nn.Module):
    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *a):
        return self._orig_mod(*a)


wrapped = OptimizedModule(torch.nn.Sequential(torch.nn.Linear(4, 4)))
log.clear()
wrapped(x)
eq([e[1] for e in log if e[0] == "push"], ["fwd:<Sequential>", "fwd:<Sequential>", "fwd:0"],
   "compiled model named after the model (wrapper and model), inner paths as the model's")

# A forward that raises ends its ranges; the next forward starts afresh.
class Fails(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(4, 4)

    def forward(self, x):
        self.inner(x)
        raise ValueError("the program's own error")


bad = torch.nn.Sequential(torch.nn.Linear(4, 4), Fails())
log.clear()
try:
    bad(x)
except ValueError:
    pass
else:
    failures.append("the forward's exception was swallowed")
eq([e[0] for e in log], ["push", "push", "pop", "push", "push", "pop", "pop", "pop"],
   "ranges of a forward that raised all popped")
log.clear()
model(x)
eq([e[1] for e in log if e[0] == "push"][:2], ["fwd:<Sequential>", "fwd:0"], "a forward after it starts afresh")

# The program's own module hooks still run, inside the module's range, and
# see what they would see without gpuprof.
seen = []
h1 = model[0].register_forward_pre_hook(lambda m, a: seen.append(("pre", a[0] is x)))
h2 = model[0].register_forward_hook(lambda m, a, o: seen.append(("post", o.shape)) or o * 2)
log.clear()
y = model(x)
h1.remove()
h2.remove()
eq(seen, [("pre", True), ("post", torch.Size([2, 4]))], "the program's own hooks ran")
eq(torch.allclose(y, model[1](model[0](x) * 2)), True, "a forward hook's returned output is used")

# native mode marks PyTorch's memory as the program ends (atexit), only where
# the program initialised CUDA itself
log.clear()
gpuprof_torch._hooks.exit_marks()
eq([e for e in log if e[0] == "mark"], [], "no exit mark without CUDA initialised")
real_cuda = torch.cuda.is_initialized, torch.cuda.device_count
torch.cuda.is_initialized = lambda: True
torch.cuda.device_count = lambda: 1
gpuprof_torch._hooks.exit_marks()
# this process has no CUDA: the hooks' own exit handler must not look for it
torch.cuda.is_initialized, torch.cuda.device_count = real_cuda
eq([e[1] for e in log if e[0] == "mark"],
   ['gpuprof:torch.memory {"allocated": 5, "reserved": 9, "device": 0}'], "exit mark")
# without GPUPROF_MODE at its start: gpuprof's sitecustomize (on PYTHONPATH in
# torch.hooks.fast) would install the hooks before the fakes (the child sets it)
child_env = {k: v for k, v in os.environ.items() if k != "GPUPROF_MODE"}
child = subprocess.run([sys.executable, os.path.abspath(__file__), "--exit-child"],
                       capture_output=True, text=True, timeout=120, env=child_env)
eq([ln for ln in child.stdout.splitlines() if ln.startswith("EXIT_MARKS")],
   ['EXIT_MARKS ["gpuprof:torch.memory {\\"allocated\\": 5, \\"reserved\\": 9, \\"device\\": 0}"]'],
   "a program that ends gets its exit mark (atexit; its stderr: %r)" % child.stderr[-300:])
log.clear()

# uninstall removes every hook and patch; install brings them back
call = torch.nn.Module.__call__
gpuprof_torch._hooks.uninstall()
eq(torch.nn.Module.__call__ is not call and getattr(call, "__wrapped__", None) is torch.nn.Module.__call__,
   True, "uninstall() restores nn.Module.__call__")
log.clear()
model(x).sum().backward()
eq(log, [], "nothing after uninstall()")
gpuprof_torch._hooks.install()
log.clear()
model(x).sum().backward()
eq(len([e for e in log if e[0] == "start"]), 4, "backward ranges again after install()")

# FSDP2's gathered parameters: a group's all-gather outputs named as
# parameters of their module, by their sharded parameter's layer
hooks = gpuprof_torch._hooks
shard = torch.nn.Parameter(torch.zeros(4))
hooks.param_layer[id(shard)] = "<Toy>.block"
gathered = torch.zeros(16)


class FakeFsdpParam:
    sharded_param = shard
    all_gather_outputs = [gathered]


class FakeGroup:
    fsdp_params = [FakeFsdpParam()]


log.clear()
hooks._name_gathered(FakeGroup())
ptr, nbytes = gpuprof_torch.storage_of(gathered)
eq([e[1] for e in log if e[0] == "mark"], ["gpuprof:torch.param 0x%x %d <Toy>.block" % (ptr, nbytes)],
   "FSDP2's gathered parameter named a parameter of its module")

# Where the hooks find FSDP2 (gpuprof_torch.FSDP2_MODULES): a torch release
# that moves FSDPParamGroup.wait_for_unshard, or FSDPParam's
# all_gather_outputs and sharded_param, fails here
try:
    from torch.distributed.fsdp import fully_shard  # noqa: F401
except Exception as e:
    print("skipped: FSDP2's hook target (torch %s has no torch.distributed.fsdp.fully_shard: %r)" % (
        torch.__version__, e))
else:
    import inspect  # noqa: E402

    loaded = {}
    for name in gpuprof_torch.FSDP2_MODULES:
        try:
            loaded[name] = importlib.import_module(name)
        except ImportError:
            pass
    try:
        group_cls = gpuprof_torch.fsdp2_param_group(loaded)
    except LookupError as e:
        group_cls = None
        failures.append("FSDP2's hook target: %s" % (e,))
    eq(group_cls is not None, True, "FSDP2's FSDPParamGroup found where the hooks look (torch %s)" % torch.__version__)
    if group_cls is not None:
        param_mod = importlib.import_module(group_cls.__module__.rpartition(".")[0] + "._fsdp_param")
        src = inspect.getsource(param_mod.FSDPParam)
        eq(all(w in src for w in ("all_gather_outputs", "sharded_param")), True,
           "FSDPParam keeps all_gather_outputs and sharded_param")

for f in failures:
    print("FAIL:", f)
print("%d check(s) failed" % len(failures) if failures else "all checks passed")
sys.exit(1 if failures else 0)
