"""PyTorch hooks of gpuprof: name every module's forward and backward, the
phases (backward, optimizer.step, zero_grad) and the step boundaries as NVTX
ranges, which the recorder (gpuprof's NVTX tool) writes into the trace. The
names are documented in exporters/TRACE_FORMAT.md ("PyTorch programs").

Installed lazily: an import hook waits for the program to import torch. The
hooks only push and pop NVTX ranges; they never change what the program
computes. Any failure turns them off with one "gpuprof:" line on stderr."""
import importlib.abc
import json
import os
import sys
import threading
import weakref

_MODE = os.environ.get("GPUPROF_MODE", "")
_OPS = os.environ.get("GPUPROF_OPS") == "1"
# Which hooks to install (for measuring what each costs): fwd, bwd, phase.
_PARTS = set(os.environ.get("GPUPROF_TORCH_HOOKS", "fwd,bwd,phase").split(","))
_FWD = "fwd" in _PARTS
_BWD = "bwd" in _PARTS
_PHASE = "phase" in _PARTS
_installed = False


def _say(msg):
    try:
        os.write(2, ("gpuprof: %s\n" % msg).encode("utf-8", "replace"))
    except OSError:
        pass


class _Names:
    """Qualified module paths, as named_modules() gives them from the root.

    A module first seen with no forward running is a root: it is named
    <ClassName> and its submodules get their paths from it. A module created
    after its root was named is found by walking the running root again."""

    def __init__(self):
        self.names = weakref.WeakKeyDictionary()

    def name_tree(self, root, root_name):
        for path, sub in root.named_modules(remove_duplicate=False):
            if sub not in self.names:
                self.names[sub] = path if path else root_name
        self.names[root] = root_name

    def get(self, module, running_root):
        try:
            return self.names[module]
        except KeyError:
            pass
        except TypeError:  # not weak-referenceable
            return "<%s>" % type(module).__name__
        if running_root is not None:
            self.name_tree(running_root, self.names.get(running_root, "<root>"))
            if module in self.names:
                return self.names[module]
        self.name_tree(module, "<%s>" % type(module).__name__)
        return self.names[module]


class _Hooks:
    def __init__(self, torch):
        self.torch = torch
        nv = torch.cuda.nvtx
        self.mark = nv.mark
        self.start = nv.range_start
        self.end = nv.range_end
        # the C entry points: the Python wrappers cost a call layer each on
        # every module call
        raw = getattr(torch._C, "_nvtx", None)
        self.push = getattr(raw, "rangePushA", None) or nv.range_push
        self.pop = getattr(raw, "rangePop", None) or nv.range_pop
        self.names = _Names()
        self.tls = threading.local()
        self.step = 0
        self.step_clock = None  # the optimizer whose steps number the steps
        self.open_bwd = {}  # thread id -> (range id, name); ended at the end of backward
        self.lock = threading.Lock()
        self.handles = []
        self.announced = False

    # ---- forward ----
    def _stack(self):
        s = getattr(self.tls, "stack", None)
        if s is None:
            s = self.tls.stack = []
        return s

    def fwd_pre(self, module, args):
        if not _FWD:
            return self._fwd_pre_quiet(module)
        if not self.announced:
            try:
                self._announce()
            except Exception as e:
                _say("PyTorch hooks: %r" % (e,))
        stack = self._stack()
        name = self.names.get(module, stack[0] if stack else None)
        stack.append(module)
        self.push("fwd:" + name)

    def _fwd_pre_quiet(self, module):
        # backward names only: the module is still named, no range is pushed
        stack = self._stack()
        self.names.get(module, stack[0] if stack else None)
        stack.append(module)

    def fwd_post(self, module, args, output):
        stack = self._stack()
        if stack and stack[-1] is module:
            stack.pop()
            if _FWD:
                self.pop()
        if _BWD and self.torch.is_grad_enabled():
            self._watch_backward(module, output)

    # ---- backward ----
    # A module's backward begins when the gradient of its output arrives: a
    # prehook on the output's grad_fn. The ranges are NVTX start/end ranges,
    # one open at a time per autograd thread (they can be ended from any
    # thread, and backward gives no reliable "module done" point).
    def _watch_backward(self, module, output):
        torch = self.torch
        t = output
        if isinstance(output, (tuple, list)) and output:
            t = output[0]
        elif isinstance(output, dict) and output:
            t = next(iter(output.values()))
        elif not isinstance(output, torch.Tensor):
            t = getattr(output, "logits", None)
            if t is None:
                t = getattr(output, "last_hidden_state", None)
        if not isinstance(t, torch.Tensor) or t.grad_fn is None:
            return
        name = self.names.names.get(module)
        if name is None:
            return
        g = t.grad_fn
        # A block's output is often its last layer's: the inner module was
        # hooked first and wins anyway, so one hook per node is enough.
        watched = getattr(self.tls, "watched", None)
        if watched is None:
            watched = self.tls.watched = weakref.WeakSet()
        try:
            if g in watched:
                return
            watched.add(g)
        except TypeError:
            pass
        g.register_prehook(lambda grad_outputs, _n=name: self._bwd_enter(_n))

    def _bwd_enter(self, name):
        tid = threading.get_ident()
        with self.lock:
            cur = self.open_bwd.get(tid)
            # Several modules share an output (a block's last layer): the
            # innermost, deepest path wins.
            if cur is not None and (cur[1] == name or cur[1].startswith(name + ".")):
                return None
            if cur is not None:
                self.end(cur[0])
            self.open_bwd[tid] = (self.start("bwd:" + name), name)
        return None

    def _end_all_bwd(self):
        with self.lock:
            for rid, _ in self.open_bwd.values():
                self.end(rid)
            self.open_bwd.clear()

    def wrap_backward(self, fn):
        hooks = self

        def backward(*args, **kwargs):
            depth = getattr(hooks.tls, "bwd_depth", 0)
            hooks.tls.bwd_depth = depth + 1
            if depth == 0 and _PHASE:
                hooks.push("phase:backward")
            try:
                return fn(*args, **kwargs)
            finally:
                hooks.tls.bwd_depth = depth
                if depth == 0:
                    hooks._end_all_bwd()
                    if _PHASE:
                        hooks.pop()

        backward.__wrapped__ = fn
        backward.__name__ = getattr(fn, "__name__", "backward")
        backward.__doc__ = getattr(fn, "__doc__", None)
        return backward

    # ---- optimizer ----
    def opt_pre(self, opt, args, kwargs):
        self.push("phase:optimizer.step")

    def opt_post(self, opt, args, kwargs):
        self.pop()
        if self.step_clock is None:
            self.step_clock = weakref.ref(opt)
        if self.step_clock() is opt:
            self.step += 1
            self.mark("step:%d" % self.step)

    def wrap_zero_grad(self, fn):
        hooks = self

        def zero_grad(*args, **kwargs):
            hooks.push("phase:zero_grad")
            try:
                return fn(*args, **kwargs)
            finally:
                hooks.pop()

        zero_grad.__wrapped__ = fn
        zero_grad.__doc__ = getattr(fn, "__doc__", None)
        return zero_grad

    def _mark_segments(self):
        """At exit, name PyTorch's own segments (address, size), so that the
        device memory the trace holds but PyTorch never reserved (cuBLAS
        handles' workspaces, other libraries) can be told apart."""
        try:
            if not self.torch.cuda.is_initialized():
                return
            for seg in self.torch.cuda.memory_snapshot():
                self.mark("gpuprof:torch.segment 0x%x %d" % (seg["address"], seg["total_size"]))
        except Exception as e:
            _say("PyTorch segments not named (%r)" % (e,))

    # ---- torch.profiler shares CUPTI with gpuprof ----
    def wrap_profiler(self, cls):
        orig_start, orig_stop = cls.start, cls.stop
        hooks = self

        def start(prof, *a, **k):
            if not getattr(hooks, "warned_profiler", False):
                hooks.warned_profiler = True
                _say("torch.profiler started inside a gpuprof trace: both use CUPTI, and "
                     "while it runs CUDA records go to torch.profiler, not to gpuprof; "
                     "the program is not affected (gpuprof resumes when it stops)")
            hooks.mark("gpuprof:torch.profiler start")
            return orig_start(prof, *a, **k)

        def stop(prof, *a, **k):
            try:
                return orig_stop(prof, *a, **k)
            finally:
                hooks.mark("gpuprof:torch.profiler stop")
                _reclaim_cupti()

        cls.start, cls.stop = start, stop

    def install(self):
        torch = self.torch
        import importlib
        parts = []
        if "fwd" in _PARTS or _BWD:
            parts.append(("module forward", self._install_forward))
        if "phase" in _PARTS or _BWD:
            parts.append(("backward", self._install_backward))
        if "phase" in _PARTS:
            parts.append(("optimizer", lambda: self._install_optimizer(importlib)))
        parts += [
                 ("torch.profiler",
                  lambda: self.wrap_profiler(importlib.import_module("torch.profiler").profile))]
        for what, fn in parts:
            # torch imports some submodules lazily: import what we hook, and
            # keep going without a part that fails.
            try:
                fn()
            except Exception as e:
                _say("PyTorch hooks: %s not hooked (%r)" % (what, e))
        if _OPS:
            # aten op ranges through PyTorch's own NVTX mode; never exited.
            try:
                self.ops_ctx = torch.autograd.profiler.emit_nvtx(record_shapes=False)
                self.ops_ctx.__enter__()
            except Exception as e:
                _say("--ops: PyTorch's op ranges not enabled (%r)" % (e,))

    def _install_forward(self):
        mm = self.torch.nn.modules.module
        self.handles.append(mm.register_module_forward_pre_hook(self.fwd_pre))
        try:
            # always_call: the range is closed even when forward raises
            h = mm.register_module_forward_hook(self.fwd_post, always_call=True)
        except TypeError:
            h = mm.register_module_forward_hook(self.fwd_post)
        self.handles.append(h)
        self.torch.nn.Module.zero_grad = self.wrap_zero_grad(self.torch.nn.Module.zero_grad)

    def _install_backward(self):
        torch = self.torch
        torch.Tensor.backward = self.wrap_backward(torch.Tensor.backward)
        torch.autograd.backward = self.wrap_backward(torch.autograd.backward)

    def _install_optimizer(self, importlib):
        opt = importlib.import_module("torch.optim.optimizer")
        self.handles.append(opt.register_optimizer_step_pre_hook(self.opt_pre))
        self.handles.append(opt.register_optimizer_step_post_hook(self.opt_post))
        opt.Optimizer.zero_grad = self.wrap_zero_grad(opt.Optimizer.zero_grad)

    def _announce(self):
        """Once, at the first forward: by then the program has set up CUDA
        as it wanted (asking at import could initialise it too early)."""
        self.announced = True
        torch = self.torch
        backend = "unknown"
        try:
            backend = torch.cuda.memory.get_allocator_backend()
        except Exception:
            pass
        conf = os.environ.get("PYTORCH_ALLOC_CONF") or os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
        info = {"torch": torch.__version__, "mode": _MODE, "alloc_conf": conf,
                "backend": backend, "pid": os.getpid(), "ops": _OPS}
        self.mark("gpuprof:torch " + json.dumps(info, sort_keys=True))
        if _MODE == "native":
            import atexit
            atexit.register(self._mark_segments)
        if _MODE == "tensor" and backend not in ("cudaMallocAsync", "unknown"):
            _say("tensor mode asked PyTorch for backend:cudaMallocAsync but it uses %s: "
                 "single tensors are not visible, the trace shows its segments "
                 "(as in --mode native)" % backend)


def _reclaim_cupti():
    """After torch.profiler stops, CUPTI's buffer callbacks and activity kinds
    are torch's; ask the recorder to take them back."""
    lib = os.environ.get("CUDA_INJECTION64_PATH")
    if not lib:
        return
    try:
        import ctypes
        rc = ctypes.CDLL(lib).gpuprof_reclaim_cupti()
        if rc != 0:
            _say("could not resume recording after torch.profiler (error %d)" % rc)
    except Exception as e:
        _say("could not resume recording after torch.profiler: %r" % (e,))


def _on_torch_imported(torch):
    global _installed
    if _installed:
        return
    _installed = True
    try:
        _Hooks(torch).install()
    except Exception as e:
        _say("PyTorch hooks not installed (%r); allocations are still recorded, "
             "without layer names" % (e,))


class _TorchLoader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        _on_torch_imported(module)


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Waits for `import torch`, lets it finish, then installs the hooks."""

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _TorchLoader(spec.loader)
        return spec


if "torch" in sys.modules:
    _on_torch_imported(sys.modules["torch"])
else:
    sys.meta_path.insert(0, _TorchFinder())
