"""Unit test of the compiled module call (profiler/python/gpuprof_call.c,
module _gpuprof_call) with stand-ins for PyTorch's objects, so that every
branch runs whatever PyTorch is installed (test_hooks.py runs it on the real
one): the forward range around the call, arguments and keyword arguments
handed on (more than fit its stack array too), the thread's stack, the
backward note of an inner module by sequence number and, without
_sequence_nr, by the node's metadata, tuple and list outputs, what is left to
_watch_backward (outermost calls, other outputs), grad mode off, exceptions
from the call, from push and from pop, bad calls, references (no growth over
many calls) and garbage collection of a cycle through a Call.
  test_fast_call.py   (exit 77, skipped, where _gpuprof_call is not built)"""
import gc
import os
import sys
import threading
import tracemalloc
import weakref

try:
    import _gpuprof_call
except ImportError as e:
    if os.environ.get("GPUPROF_FAST_CALL_REQUIRED") == "1":
        print("FAIL: _gpuprof_call not importable: %s" % e)
        sys.exit(1)
    print("_gpuprof_call not built for this Python: skipped (%s)" % e)
    sys.exit(77)

# the hooks' own per-thread state (importing them without torch installs
# only their wait for `import torch`)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "profiler", "python"))
from gpuprof_torch import _Thread as Thread  # noqa: E402

failures = []


def eq(got, want, what):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


class Tensor:
    def __init__(self, grad_fn=None):
        self.grad_fn = grad_fn


class Node:
    def __init__(self, seq):
        self.seq = seq

    def _sequence_nr(self):
        return self.seq


class OldNode:  # a PyTorch without _sequence_nr
    def __init__(self):
        self.metadata = {}


class Hooks:
    def __init__(self):
        self.tls = threading.local()


class Module:
    pass


log = []
grad = [True]


def make(hooks, fwd=True, bwd=True, orig=None, push=None, pop=None):
    def default_orig(module, *args, **kwargs):
        log.append(("call", module, args, kwargs))
        return module.out

    def new_thread():
        st = hooks.tls.s = Thread()
        log.append(("new_thread",))
        return st

    def lookup(module, root):
        log.append(("lookup", module, root))
        return "fwd:<new>"

    return _gpuprof_call.Call(
        orig or default_orig, hooks, Tensor, fwd_names, paths, lookup, new_thread,
        push or (lambda name: log.append(("push", name))),
        pop or (lambda: log.append(("pop",))),
        lambda: grad[0], lambda st, m, out: log.append(("watch", m, out)), fwd, bwd)


root, inner, other = Module(), Module(), Module()
fwd_names = {id(root): "fwd:<Root>", id(inner): "fwd:a.b"}
paths = {id(root): "<Root>", id(inner): "a.b"}
hooks = Hooks()
call = make(hooks)


def run_inner(out, *args, **kwargs):
    """inner called inside root's call: root's orig calls inner."""
    inner.out = out
    root.out = None

    def root_orig(module, *a, **k):
        call(inner, args, kwargs)
        return module.out  # None: the outermost call notes nothing here

    outer = make(hooks, orig=root_orig)
    return outer(root, (), None)


# first call on this thread: a new _Thread; root is outermost, inner is noted
log.clear()
g1 = Node(7)
t = Tensor(g1)
run_inner(t, 1, 2, k=3)
st = hooks.tls.s
eq([e[0] for e in log], ["new_thread", "push", "push", "call", "pop", "pop"], "ranges around calls")
eq([e[1] for e in log if e[0] == "push"], ["fwd:<Root>", "fwd:a.b"], "range names")
eq([e for e in log if e[0] == "call"], [("call", inner, (1, 2), {"k": 3})], "arguments handed on")
eq(st.notes, [(g1, "a.b")], "inner module's node noted with its path")
eq(st.last_seq, 7, "last sequence number kept")
eq(st.stack, [], "stack empty after the calls")

# the same node again (a block whose output is its last layer's): no second note
log.clear()
run_inner(Tensor(g1))
eq(st.notes, [], "a new outermost call starts new notes; the same node is not noted twice")
g8 = Node(8)
run_inner(Tensor(g8))
eq(st.notes, [(g8, "a.b")], "a new node is noted")

# tuple and list outputs whose first item is a tensor
g2, g3 = Node(9), Node(10)
run_inner((Tensor(g2), "x"))
eq(st.notes, [(g2, "a.b")], "tuple output")
run_inner([Tensor(g3)])
eq(st.notes, [(g3, "a.b")], "list output")

# outputs left to _watch_backward: other types, empty tuples, a tensor subclass
class SubTensor(Tensor):
    pass


for out in ({"a": Tensor(Node(11))}, (), SubTensor(Node(12)), ("x", Tensor(Node(13)))):
    log.clear()
    run_inner(out)
    eq([e for e in log if e[0] == "watch"], [("watch", inner, out)], "left to watch: %r" % (out,))
    eq(st.notes, [], "nothing noted in C for %r" % (out,))

# the outermost call's note is always _watch_backward's
log.clear()
root.out = Tensor(Node(14))
call(root, (), None)
eq([e for e in log if e[0] == "watch"], [("watch", root, root.out)], "outermost output to watch")

# no grad, None output, no grad_fn: nothing noted, watch not called
for out, on in ((Tensor(Node(15)), False), (None, True), (Tensor(None), True)):
    grad[0] = on
    log.clear()
    run_inner(out)
    eq([e for e in log if e[0] == "watch"], [], "no watch (grad %s, %r)" % (on, out))
    eq(st.notes, [], "no note (grad %s, %r)" % (on, out))
grad[0] = True

# a PyTorch without _sequence_nr: the node's metadata marks it
old = OldNode()
run_inner(Tensor(old))
eq(st.notes, [(old, "a.b")], "metadata path: noted")
eq(old.metadata, {"gpuprof": True}, "metadata path: marked")
run_inner(Tensor(old))
eq(st.notes, [], "metadata path: the same node is not noted twice")

# a module not named yet: lookup(module, running root)
log.clear()
other.out = None


def root_calls_other(module, *a, **k):
    return call(other, (), None)


make(hooks, orig=root_calls_other)(root, (), None)
eq([e for e in log if e[0] == "lookup"], [("lookup", other, root)], "lookup with the running root")
eq([e[1] for e in log if e[0] == "push"], ["fwd:<Root>", "fwd:<new>"], "looked-up name used")

# many arguments (more than the call's stack array) and keyword arguments
log.clear()
inner.out = None
many = tuple(range(20))
call(inner, many, {"a": 1, "b": 2})
eq([e for e in log if e[0] == "call"], [("call", inner, many, {"a": 1, "b": 2})], "20 arguments")

# fwd off: no ranges; bwd off: no notes
log.clear()
make(hooks, fwd=False, bwd=False)(inner, (), None)
eq([e[0] for e in log], ["call"], "fwd and bwd off: the call alone")

# the call raises: its range ends, the stack is restored, the same exception comes out
err = ValueError("the program's own error")


def raising(module, *a, **k):
    raise err


log.clear()
try:
    make(hooks, orig=raising)(inner, (), None)
    failures.append("exception swallowed")
except ValueError as e:
    eq(e is err, True, "the program's exception object")
eq([e[0] for e in log], ["push", "pop"], "range ended when the call raised")
eq(st.stack, [], "stack restored after the call raised")

# push raises: no call, stack restored; pop raises after the call: its error
def bad_push(name):
    raise RuntimeError("push")


def bad_pop():
    raise RuntimeError("pop")


log.clear()
try:
    make(hooks, push=bad_push)(inner, (), None)
    failures.append("push's error swallowed")
except RuntimeError as e:
    eq(str(e), "push", "push's error")
eq([e[0] for e in log], [], "no call after push failed")
eq(st.stack, [], "stack restored after push failed")
try:
    make(hooks, pop=bad_pop)(inner, (), None)
    failures.append("pop's error swallowed")
except RuntimeError as e:
    eq(str(e), "pop", "pop's error")
try:
    make(hooks, orig=raising, pop=bad_pop)(inner, (), None)
except ValueError as e:
    eq(e is err, True, "the call's exception wins over pop's")
except RuntimeError:
    failures.append("pop's error replaced the call's")
eq(st.stack, [], "stack restored after pop failed")

# bad calls and bad construction
for args in (((inner, ()),), ((inner, [], None),), ((inner, (), []),)):
    try:
        call(*args[0])
        failures.append("bad call accepted: %r" % (args,))
    except TypeError:
        pass
try:
    _gpuprof_call.Call(None, hooks, "not a type", {}, {}, None, None, None, None, None, None, 1, 1)
    failures.append("bad tensor_type accepted")
except TypeError:
    pass

# references: many calls with notes, no growth
quiet_inner = make(hooks, orig=lambda m, *a, **k: m.out, push=lambda n: None, pop=lambda: None)


def root_many(module, *a, **k):
    for i in range(100):
        inner.out = Tensor(Node(i))
        quiet_inner(inner, (i,), {"k": i})
    return None


quiet = make(hooks, orig=root_many, push=lambda n: None, pop=lambda: None)
for _ in range(50):  # warm up caches, allocator pools
    quiet(root, (), None)
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
for _ in range(500):
    quiet(root, (), None)
    st.notes = []
gc.collect()
grown = tracemalloc.get_traced_memory()[0] - before
tracemalloc.stop()
eq(grown < 64 * 1024, True, "memory after 50000 calls grew by %d bytes" % grown)

# a cycle through a Call (hooks -> Call -> hooks) is collected
h2 = Hooks()
h2.call = make(h2)
ref = weakref.ref(h2)
del h2
gc.collect()
eq(ref(), None, "a cycle through a Call is collected")

for f in failures:
    print("FAIL:", f)
print("%d check(s) failed" % len(failures) if failures else "all checks passed")
sys.exit(1 if failures else 0)
