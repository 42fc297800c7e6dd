"""PyTorch hooks of gpuprof: name every module's forward and backward, the
phases (backward, optimizer.step, zero_grad) and the step boundaries as NVTX
ranges, which the recorder (gpuprof's NVTX tool) writes into the trace. The
names are documented in exporters/TRACE_FORMAT.md ("PyTorch programs").

Installed lazily: an import hook waits for the program to import torch. The
hooks only push and pop NVTX ranges; they never change what the program
computes. Any failure turns them off with one "gpuprof:" line on stderr."""
import atexit
import functools
import importlib.abc
import json
import os
import sys
import threading
import weakref

_MODE = os.environ.get("GPUPROF_MODE", "")
_OPS = os.environ.get("GPUPROF_OPS") == "1"
# --torch-history (native mode only): PyTorch's allocator records its own
# history, written into the trace at exit (gpuprof_history.History).
_HISTORY = os.environ.get("GPUPROF_TORCH_HISTORY") == "1" and _MODE == "native"
# Native mode: gpuprof's hook on PyTorch's caching allocator records every
# block as it happens (gpuprof_tracker.Tracker); GPUPROF_TORCH_TRACKER=0
# leaves it out (then only segments and sampled counts). --stacks
# (GPUPROF_STACKS=1): each block also names the Python stack that made it.
_TRACKER = _MODE == "native" and os.environ.get("GPUPROF_TORCH_TRACKER", "1") != "0"
_STACKS = os.environ.get("GPUPROF_STACKS") == "1" and _TRACKER
# Each module call's work is done by the compiled _gpuprof_call
# (gpuprof_call.c) where it was built for this Python: it cut what the hooks
# cost a GPT-2 step by 14-62% (bench/RESULTS.md, cost).
# GPUPROF_TORCH_FAST=0 keeps the Python wrapper; =1 also says so on stderr
# when the compiled one is missing.
_FAST = os.environ.get("GPUPROF_TORCH_FAST", "") != "0"
_FAST_ASKED = os.environ.get("GPUPROF_TORCH_FAST", "") == "1"
_installed = False
_hooks = None  # the installed _Hooks (bench/hook_ab.py switches it off and on)


def _say(msg):
    try:
        os.write(2, ("gpuprof: %s\n" % msg).encode("utf-8", "replace"))
    except OSError:
        pass


def _parts():
    """Which hooks to install (GPUPROF_TORCH_HOOKS, to measure what each
    costs): fwd, bwd, phase; default all."""
    return set(os.environ.get("GPUPROF_TORCH_HOOKS", "fwd,bwd,phase").split(","))


# FSDP2 (torch.distributed.fsdp.fully_shard) gathers each module's whole
# parameters into new tensors for its forward and its backward (made inside
# the module, they would count as its activations): its parameter group's
# wait_for_unshard() is wrapped, and once the all-gather's outputs are
# copied out each is named a parameter of its module
# (gpuprof:torch.param). Where FSDP2's classes live, in the torch releases
# it is hooked in; a release that moves them fails tests/torch/test_hooks.py.
FSDP2_MODULES = ("torch.distributed.fsdp._fully_shard._fsdp_param_group",
                 "torch.distributed._composable.fsdp._fsdp_param_group")


def fsdp2_param_group(modules=None):
    """FSDP2's FSDPParamGroup, whose wait_for_unshard the hooks wrap, from
    the modules loaded (sys.modules): None while FSDP2 is not loaded.
    Raises LookupError(why) where it is loaded without what is hooked."""
    modules = sys.modules if modules is None else modules
    for name in FSDP2_MODULES:
        mod = modules.get(name)
        if mod is None:
            continue
        cls = getattr(mod, "FSDPParamGroup", None)
        if cls is None or not callable(getattr(cls, "wait_for_unshard", None)):
            raise LookupError("%s has no FSDPParamGroup.wait_for_unshard" % name)
        return cls
    return None


def storage_of(t):
    """The address and bytes of the storage that holds tensor t: the
    allocation PyTorch made for it (untyped_storage since torch 2.0)."""
    st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return st.data_ptr(), st.nbytes()


class _Names:
    """Qualified module paths, as named_modules() gives them from the root,
    kept as the range names ("fwd:<path>", "bwd:<path>") so that a module call
    costs one dict lookup. Keyed by id(): a weak reference per module removes
    its entry when it is collected (a WeakKeyDictionary would make a weak
    reference on every lookup).

    A module first seen with no forward running is a root: it is named
    <ClassName> and its submodules get their paths from it, and on_root
    (when given) is told of it. A module created after its root was named
    is found by walking the running root again."""

    def __init__(self, on_root=None):
        self.fwd = {}  # id(module) -> "fwd:<path>"
        self.path = {}  # id(module) -> "<path>"
        self.refs = {}  # id(module) -> weakref whose callback forgets it
        self.on_root = on_root

    def _forget(self, key):
        self.fwd.pop(key, None)
        self.path.pop(key, None)
        self.refs.pop(key, None)

    def _set(self, module, path):
        key = id(module)
        if key in self.refs:
            return
        try:
            self.refs[key] = weakref.ref(module, lambda _r, _k=key: self._forget(_k))
        except TypeError:  # not weak-referenceable: named each call, never kept
            return
        self.fwd[key] = "fwd:" + path
        self.path[key] = path

    def name_tree(self, root, root_name):
        self._set(root, root_name)
        inner = _compiled_model(root)
        if inner is not None:
            # the model inside gets the paths the user wrote (no _orig_mod.)
            return self.name_tree(inner, root_name)
        for path, sub in root.named_modules(remove_duplicate=False):
            if path:
                self._set(sub, path)

    def lookup(self, module, running_root):
        """The "fwd:<path>" name of a module not yet known."""
        key = id(module)
        if running_root is not None:
            self.name_tree(running_root, self.path.get(id(running_root), "<root>"))
            if key in self.fwd:
                return self.fwd[key]
        self.name_tree(module, _root_name(module))
        if self.on_root is not None:
            self.on_root(module, _root_name(module))
        return self.fwd.get(key) or "fwd:" + _root_name(module)


def _no_range(grad_outputs):
    return None


class _Pending:
    """Backward hooks noted in one outermost forward: (node, module path)
    pairs, registered at most once, each with the path's hook (hook_for).
    Owned by the outermost output's node."""

    __slots__ = ("notes", "hook_for", "__weakref__")

    def __init__(self, notes, hook_for):
        self.notes = notes
        self.hook_for = hook_for

    def register(self):
        notes, self.notes = self.notes, []
        hook_for = self.hook_for
        for g, path in notes:
            g.register_prehook(hook_for(path))


def _compiled_model(module):
    """The model inside torch.compile(model)'s OptimizedModule, else None."""
    if type(module).__name__ != "OptimizedModule":
        return None
    return getattr(module, "_orig_mod", None)


def _root_name(module):
    # a compiled model is named after the model, as the user knows it
    inner = _compiled_model(module)
    return "<%s>" % type(inner if inner is not None else module).__name__


class _Thread:
    """One thread's state: the module calls running (outermost first), the
    backward notes of the outermost call, the last output node's sequence
    number, and how deep in backward() it is."""

    __slots__ = ("stack", "notes", "last_seq", "bwd_depth")

    def __init__(self):
        self.stack = []
        self.notes = []
        self.last_seq = None
        self.bwd_depth = 0


class _Hooks:
    def __init__(self, torch, parts):
        self.torch = torch
        self.fwd = "fwd" in parts
        self.bwd = "bwd" in parts
        self.phase = "phase" in parts
        raw = getattr(torch._C, "_nvtx", None)
        nv = torch.cuda.nvtx
        # the C entry points: the Python wrappers cost a call layer each on
        # every module call
        self.push = getattr(raw, "rangePushA", None) or nv.range_push
        self.pop = getattr(raw, "rangePop", None) or nv.range_pop
        self.start = getattr(raw, "rangeStartA", None) or nv.range_start
        self.end = getattr(raw, "rangeEnd", None) or nv.range_end
        self.mark = getattr(raw, "markA", None) or nv.mark
        comp = getattr(getattr(torch, "compiler", None), "is_compiling", None)
        self.compiling = comp or (lambda: False)
        self.names = _Names(self._name_params)
        self.fwd_names = self.names.fwd
        # id(parameter) -> its module's layer, as analyze names layers
        # ("<Root>.path"): what its optimizer's states are named after
        self.param_layer = {}
        self.fsdp2 = False  # FSDP2's unshard hooked (or found not hookable)
        self.opt_named = {}  # id(optimizer) -> how many of its states were named
        self.grad_enabled = torch.is_grad_enabled
        self.tls = threading.local()  # .s: this thread's _Thread
        self.step = 0
        self.step_clock = None  # the optimizer whose steps number the steps
        self.open_bwd = {}  # thread id -> (range id, path); ended at the end of backward
        self.bwd_hooks = {}  # module path -> its backward prehook, made once (_bwd_hook_for)
        self.pending = []  # weak references to _Pending notes, oldest first
        self.handles = []
        self.restore = []  # (owner, attribute, original) patched by install()
        self.announced = False
        # native mode without the allocator hook: PyTorch's counts sampled
        # (per step, every GPUPROF_TORCH_MEMORY_MS); off once the hook is on
        self.memory_marks = _MODE == "native"
        self.tracker = None  # gpuprof_tracker.Tracker in native mode
        self.want_fast = _FAST  # try the compiled module calls (benches set it per variant)
        self.fast = False  # whether module calls go through _gpuprof_call

    # ---- forward ----
    # nn.Module.__call__ is wrapped rather than hooked with global module
    # hooks: any global hook sends every module call down PyTorch's hooked
    # path, which costs about 3 µs a call by itself (bench/hook_cpu.py, torch
    # 2.11 on an H100's host), more than the naming does, and the
    # forward pass is where a GPU waits for the host. Modules with hooks of
    # their own still take that path, inside the wrapper.
    def _thread(self):
        """This thread's state, made at its first module call."""
        try:
            return self.tls.s
        except AttributeError:
            pass
        st = self.tls.s = _Thread()
        if not self.announced:
            try:
                self._announce()
            except Exception as e:
                _say("PyTorch hooks: %r" % (e,))
        return st

    def make_call(self, orig):
        """The wrapper of nn.Module.__call__ (orig): the compiled module call
        behind a Python descriptor, where it was built (and not
        GPUPROF_TORCH_FAST=0), else the Python one."""
        compiling = self.compiling
        fast = self._fast_call(orig) if self.want_fast else None
        if fast is not None:
            # torch.compile inlines this function and takes the first
            # branch; a C callable in its place would be a graph break
            def __call__(module, *args, **kwargs):
                if compiling():
                    return orig(module, *args, **kwargs)
                return fast(module, args, kwargs)
        else:
            __call__ = self._python_call(orig)
        __call__.__wrapped__ = orig
        __call__.__doc__ = getattr(orig, "__doc__", None)
        return __call__

    def _python_call(self, orig):
        """make_call's wrapper in Python. Its work is inlined, with what it
        needs bound once here: each method call or attribute lookup it saves
        is paid on every module call, about 150 a GPT-2 forward."""
        compiling = self.compiling
        hooks = self
        fwd_names = self.fwd_names
        lookup = self.names.lookup
        fwd, bwd = self.fwd, self.bwd
        push, pop = self.push, self.pop
        grad_enabled = self.grad_enabled
        watch = self._watch_backward
        new_thread = self._thread

        def __call__(module, *args, **kwargs):
            if compiling():
                # inside torch.compile's tracing: no NVTX calls in the graph
                return orig(module, *args, **kwargs)
            try:
                st = hooks.tls.s
            except AttributeError:
                st = new_thread()
            stack = st.stack
            name = fwd_names.get(id(module))
            if name is None:
                name = lookup(module, stack[0] if stack else None)
            if not stack:
                st.notes = []  # a forward that raised left its notes
            stack.append(module)
            if fwd:
                push(name)
            try:
                output = orig(module, *args, **kwargs)
            finally:
                # also when it raises: the range ends with the exception
                if stack and stack[-1] is module:
                    stack.pop()
                    if fwd:
                        pop()
            if bwd and output is not None and grad_enabled():
                watch(st, module, output)
            return output

        return __call__

    def _fast_call(self, orig):
        """The compiled module call (gpuprof_call.c) doing what
        _python_call's wrapper does, or None where it was not built for this
        Python: then the trace's gpuprof:torch mark says so, and stderr too
        where GPUPROF_TORCH_FAST=1 asked for it (once)."""
        try:
            import _gpuprof_call
        except ImportError as e:
            global _FAST, _FAST_ASKED
            if _FAST_ASKED:
                _say("GPUPROF_TORCH_FAST=1: compiled module calls not available (%s); "
                     "the Python ones are used" % (e,))
            _FAST = _FAST_ASKED = False  # not tried again
            return None
        self.fast = True
        return _gpuprof_call.Call(orig, self, self.torch.Tensor, self.fwd_names, self.names.path,
                                  self.names.lookup, self._thread, self.push, self.pop,
                                  self.grad_enabled, self._watch_backward, self.fwd, self.bwd)

    # ---- backward ----
    # A module's backward begins when the gradient of its output arrives: a
    # prehook on the output's grad_fn. The ranges are NVTX start/end ranges,
    # one open at a time per autograd thread (they can be ended from any
    # thread, and backward gives no reliable "module done" point).
    #
    # Registering a prehook costs microseconds, and the forward pass is where
    # a GPU waits for the host (measured: bench/gpu_idle.py), so the forward
    # only notes (node, hook) pairs; they are registered when backward starts
    # (wrap_backward, before the engine runs), when the GPU still has the
    # forward's last kernels to run. The notes of one outermost module call
    # are kept by a _Pending that its output's node owns (in the node's
    # metadata dict): if that graph dies without a backward the notes die
    # with it, and they never keep another graph alive.
    def _watch_backward(self, st, module, output):
        t = output
        if type(t) is not self.torch.Tensor:
            if isinstance(output, (tuple, list)) and output:
                t = output[0]
            elif isinstance(output, dict) and output:
                t = next(iter(output.values()))
            elif not isinstance(output, self.torch.Tensor):
                t = getattr(output, "logits", None)
                if t is None:
                    t = getattr(output, "last_hidden_state", None)
            if not isinstance(t, self.torch.Tensor):
                return
        g = t.grad_fn
        if g is None:
            return
        # A block's output is often its last layer's: the inner module's
        # post hook ran just before with the same node and wins. Nodes are
        # told apart by their sequence number (unique per thread; Python
        # wrappers of nodes come and go and their ids are reused, and holding
        # a node would keep its saved tensors alive). Without _sequence_nr
        # (older PyTorch) the node remembers it in its metadata dict, which
        # costs a dict per node and the GIL when the node is freed.
        seq = getattr(g, "_sequence_nr", None)
        if seq is not None:
            key = seq()
            dup = st.last_seq == key
            st.last_seq = key
        else:
            md = g.metadata
            dup = "gpuprof" in md
            md["gpuprof"] = True
        # The notes hold module paths; their hooks are made as they are
        # registered, when backward starts.
        notes = st.notes
        if st.stack:
            if not dup:
                path = self.names.path.get(id(module))
                if path is not None:
                    notes.append((g, path))
            return
        path = None
        if dup and notes and notes[-1][0] is g:
            path = notes.pop()[1]  # the inner module's name wins
        elif not dup:
            path = self.names.path.get(id(module))
        if path is not None:
            hook = self._bwd_hook_for(path)
        elif notes:
            hook = _no_range
        else:
            return
        # The outermost module's output: its node owns the notes of
        # everything inside it, and its own hook is registered now. That
        # hook registers the notes too if no wrapped backward did (e.g.
        # torch.autograd.grad). It holds the notes weakly and the notes
        # exclude this node: nothing refers back to the node (a cycle
        # through a C++ node would be freed only by a garbage collection).
        if notes:
            st.notes = []
            p = _Pending(notes, self._bwd_hook_for)
            try:
                g.metadata["gpuprof.notes"] = p
            except Exception:
                p.register()  # no metadata dict: register now, in the forward
            else:
                ref = weakref.ref(p)
                hook = functools.partial(self._bwd_enter_outer, hook, ref)
                self.pending.append(ref)
                if len(self.pending) > 64:  # forwards without backward (evaluation)
                    self.pending = [r for r in self.pending if r() is not None]
        g.register_prehook(hook)

    def _bwd_hook_for(self, path):
        hook = self.bwd_hooks.get(path)
        if hook is None:
            hook = self.bwd_hooks[path] = functools.partial(self._bwd_enter, "bwd:" + path)
        return hook

    def _bwd_enter_outer(self, hook, ref, grad_outputs):
        p = ref()
        if p is not None:
            p.register()
        return hook(grad_outputs)

    def register_pending(self):
        """Registers every noted backward hook whose graph is alive; called
        as backward starts."""
        refs = self.pending
        self.pending = []
        for r in refs:
            p = r()
            if p is not None:
                p.register()

    def _bwd_enter(self, name, grad_outputs):
        # dict operations are atomic under the GIL: no lock
        tid = threading.get_ident()
        cur = self.open_bwd.get(tid)
        if cur is not None:
            self.end(cur[0])
        self.open_bwd[tid] = (self.start(name), name)
        return None

    def _end_all_bwd(self):
        opened = self.open_bwd
        self.open_bwd = {}
        for rid, _ in opened.values():
            self.end(rid)

    def wrap_backward(self, fn):
        hooks = self

        def backward(*args, **kwargs):
            st = hooks._thread()
            depth = st.bwd_depth
            st.bwd_depth = depth + 1
            stack_token = None
            if depth == 0:
                if hooks.memory_marks:
                    hooks._memory_mark()
                if hooks.phase:
                    hooks.push("phase:backward")
                if hooks.bwd:
                    hooks.register_pending()
                if hooks._tracking():
                    stack_token = hooks.tracker.backward_begin()
            try:
                return fn(*args, **kwargs)
            finally:
                st.bwd_depth = depth
                if depth == 0:
                    if hooks.tracker is not None:
                        hooks.tracker.backward_end(stack_token)
                    hooks._end_all_bwd()
                    if hooks.phase:
                        hooks.pop()

        backward.__wrapped__ = fn
        backward.__name__ = getattr(fn, "__name__", "backward")
        backward.__doc__ = getattr(fn, "__doc__", None)
        return backward

    def start_memory_sampler(self):
        """native mode: PyTorch's allocated/reserved bytes also every
        GPUPROF_TORCH_MEMORY_MS (default 100; 0: off) from a daemon thread,
        so that programs without training steps get the timeline too. It
        waits for the program to initialise CUDA itself, and stops at the
        first failure."""
        try:
            period = int(os.environ.get("GPUPROF_TORCH_MEMORY_MS", "100"))
        except ValueError:
            period = 100
        if not self.memory_marks or period <= 0:
            return
        hooks = self

        def sample():
            import time
            last = {}
            while hooks.memory_marks:
                time.sleep(period / 1000.0)
                try:
                    n = hooks._cuda_devices()
                except Exception as e:
                    _say("PyTorch's memory not sampled (%r)" % (e,))
                    return
                for dev in range(n):
                    last[dev] = hooks._memory_mark(last.get(dev), dev)

        t = threading.Thread(target=sample, name="gpuprof-memory", daemon=True)
        t.start()

    def tracker_attached(self):
        """The allocator hook records every block from now on: the samples
        and per-step marks are not needed."""
        self.memory_marks = False

    def exit_marks(self):
        """native mode, at exit: PyTorch's allocated and reserved bytes as
        the program ends, so that a program shorter than the sampler's
        period, or ending between two samples, still has its last state in
        the trace (with the allocator hook: PyTorch's own word beside the
        trace's sums). Never initialises CUDA."""
        if _MODE != "native":
            return
        try:
            n = self._cuda_devices()
        except Exception:
            return
        for dev in range(n):
            self._memory_mark(None, dev)

    def _cuda_devices(self):
        """How many devices to mark: 0 until the program has initialised
        CUDA itself (never initialised here)."""
        cuda = self.torch.cuda
        return cuda.device_count() if cuda.is_initialized() else 0

    def _tracking(self):
        return self.tracker is not None and self.tracker.state == "on"

    def _memory_mark(self, last=None, dev=None):
        """native mode: PyTorch's own allocated and reserved bytes, so that
        the trace shows allocated inside the segments (fragmentation).
        Written before each backward (where activations peak), after each
        optimizer step, and by the sampler; one call into the allocator's
        statistics each."""
        torch = self.torch
        try:
            if dev is None:
                dev = torch.cuda.current_device()
            st = torch._C._cuda_memoryStats(dev)
            now = (st["allocated_bytes"]["all"]["current"], st["reserved_bytes"]["all"]["current"], dev)
            if now != last and (now[1] or last):  # the sampler marks changes only
                self.mark('gpuprof:torch.memory {"allocated": %d, "reserved": %d, "device": %d}' % now)
            return now
        except Exception as e:
            self.memory_marks = False
            _say("PyTorch's allocated memory not marked (%r)" % (e,))
            return last

    # ---- tensors made outside any module: named after their module ----
    # Parameters are made before the first forward and optimizer states in
    # the optimizer's step, outside every fwd: range; a gpuprof:torch.tensor
    # mark names the allocation that holds each after its module, so that
    # the report puts them under their layer. Once per root model, once per
    # optimizer state: nothing per step.
    def _name_tensor(self, t, layer):
        if not getattr(t, "is_cuda", False):
            return
        # a DTensor (FSDP2's sharded parameters and their optimizer states)
        # has no storage of its own: its shard on this rank holds the memory
        if hasattr(t, "to_local"):
            t = t.to_local()
        ptr, n = storage_of(t)
        if ptr:
            self.mark("gpuprof:torch.tensor 0x%x %d %s" % (ptr, n, layer))

    def _name_params(self, root, root_name):
        """A new root model's parameters (at its first forward)."""
        if not self.fsdp2:
            self._install_fsdp2()
        try:
            inner = _compiled_model(root)
            for name, p in (inner if inner is not None else root).named_parameters():
                mod = name.rpartition(".")[0]
                layer = root_name + "." + mod if mod else root_name
                self.param_layer[id(p)] = layer
                self._name_tensor(p, layer)
        except Exception as e:
            _say("PyTorch hooks: parameters not named (%r)" % (e,))

    def _install_fsdp2(self):
        """At a root model's first forward: FSDP2's unshard wrapped, if FSDP2
        is loaded (fully_shard is applied before the first forward)."""
        try:
            cls = fsdp2_param_group()
        except LookupError as e:
            self.fsdp2 = True
            _say("PyTorch hooks: FSDP2's gathered parameters count as activations (%s)" % (e,))
            return
        if cls is None:
            return
        self.fsdp2 = True
        hooks = self

        def wrap(orig):
            @functools.wraps(orig)
            def wait_for_unshard(group, *args, **kwargs):
                out = orig(group, *args, **kwargs)
                hooks._name_gathered(group)
                return out
            return wait_for_unshard

        self._patch(cls, "wait_for_unshard", wrap)

    def _name_gathered(self, group):
        """The whole parameters an FSDP2 group just gathered, each named a
        parameter of its module (its sharded parameter's layer)."""
        try:
            for fp in group.fsdp_params:
                layer = self.param_layer.get(id(getattr(fp, "sharded_param", None)))
                if layer is None:
                    continue
                for t in getattr(fp, "all_gather_outputs", ()) or ():
                    ptr, n = storage_of(t)
                    if ptr and n:
                        self.mark("gpuprof:torch.param 0x%x %d %s" % (ptr, n, layer))
        except Exception as e:
            if self.fsdp2 is True:
                self.fsdp2 = "said"
                _say("PyTorch hooks: FSDP2's gathered parameters not named (%r)" % (e,))

    def _name_states(self, opt):
        """An optimizer's states, named after their parameters' modules,
        whenever it has states not named yet (its first steps)."""
        state = getattr(opt, "state", None)
        if not state or len(state) == self.opt_named.get(id(opt), 0):
            return
        self.opt_named[id(opt)] = len(state)
        try:
            for p, st in list(state.items()):
                layer = self.param_layer.get(id(p))
                if layer is None or not isinstance(st, dict):
                    continue
                for v in st.values():
                    if isinstance(v, self.torch.Tensor):
                        self._name_tensor(v, layer)
        except Exception as e:
            _say("PyTorch hooks: optimizer state not named (%r)" % (e,))

    # ---- optimizer ----
    def opt_pre(self, opt, args, kwargs):
        self.push("phase:optimizer.step")

    def opt_post(self, opt, args, kwargs):
        self.pop()
        self._name_states(opt)
        if self.step_clock is None:
            self.step_clock = weakref.ref(opt)
        if self.step_clock() is opt:
            self.step += 1
            self.mark("step:%d" % self.step)
            if self.memory_marks:
                self._memory_mark()

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
        handles' workspaces, other libraries) can be told apart. Not needed
        with the allocator hook: its segment events name them as they come."""
        try:
            if not self.torch.cuda.is_initialized() or self._tracking():
                return
            for seg in self.torch.cuda.memory_snapshot():
                self.mark("gpuprof:torch.segment 0x%x %d" % (seg["address"], seg["total_size"]))
        except Exception as e:
            _say("PyTorch segments not named (%r)" % (e,))

    # ---- torch.profiler shares CUPTI with gpuprof ----
    def wrap_profiler(self, cls):
        if getattr(cls, "_gpuprof_wrapped", False):
            return
        orig_start, orig_stop = cls.start, cls.stop
        hooks = self

        def start(prof, *a, **k):
            if not getattr(hooks, "warned_profiler", False):
                hooks.warned_profiler = True
                _say("torch.profiler started inside a gpuprof trace: both use CUPTI, and "
                     "while it runs CUDA records go to torch.profiler, not to gpuprof; "
                     "the program is not affected (gpuprof resumes when it stops)")
            hooks.mark("gpuprof:torch.profiler start")
            _cupti_call("gpuprof_yield_cupti", "let torch.profiler use CUPTI")
            return orig_start(prof, *a, **k)

        def stop(prof, *a, **k):
            try:
                return orig_stop(prof, *a, **k)
            finally:
                hooks.mark("gpuprof:torch.profiler stop")
                _cupti_call("gpuprof_reclaim_cupti", "resume recording after torch.profiler")

        cls.start, cls.stop = start, stop
        cls._gpuprof_wrapped = True

    def _patch(self, owner, attr, wrapper):
        orig = getattr(owner, attr)
        self.restore.append((owner, attr, orig))
        setattr(owner, attr, wrapper(orig))

    def install(self):
        torch = self.torch
        import importlib
        parts = []
        if self.fwd or self.bwd:
            parts.append(("module forward", self._install_forward))
        if self.phase or self.bwd:
            parts.append(("backward", self._install_backward))
        if self.phase:
            parts.append(("optimizer", lambda: self._install_optimizer(importlib)))
        parts.append(("torch.profiler",
                      lambda: self.wrap_profiler(importlib.import_module("torch.profiler").profile)))
        for what, fn in parts:
            # torch imports some submodules lazily: import what we hook, and
            # keep going without a part that fails.
            try:
                fn()
            except Exception as e:
                _say("PyTorch hooks: %s not hooked (%r)" % (what, e))
        if _OPS and getattr(self, "ops_ctx", None) is None:
            # aten op ranges through PyTorch's own NVTX mode; never exited.
            try:
                self.ops_ctx = torch.autograd.profiler.emit_nvtx(record_shapes=False)
                self.ops_ctx.__enter__()
            except Exception as e:
                _say("--ops: PyTorch's op ranges not enabled (%r)" % (e,))

    def uninstall(self):
        """Removes the hooks and patches (not the torch.profiler wrapper),
        e.g. to measure what they cost in one process (bench/hook_ab.py)."""
        for h in self.handles:
            h.remove()
        self.handles = []
        for owner, attr, orig in reversed(self.restore):
            setattr(owner, attr, orig)
        self.restore = []
        self.fsdp2 = False  # hooked again at the next root model's first forward
        self._end_all_bwd()
        self.tls = threading.local()

    def _install_forward(self):
        self._patch(self.torch.nn.Module, "__call__", self.make_call)
        if self.phase:
            self._patch(self.torch.nn.Module, "zero_grad", self.wrap_zero_grad)

    def _install_backward(self):
        torch = self.torch
        self._patch(torch.Tensor, "backward", self.wrap_backward)
        self._patch(torch.autograd, "backward", self.wrap_backward)

    def _install_optimizer(self, importlib):
        opt = importlib.import_module("torch.optim.optimizer")
        self.handles.append(opt.register_optimizer_step_pre_hook(self.opt_pre))
        self.handles.append(opt.register_optimizer_step_post_hook(self.opt_post))
        self._patch(opt.Optimizer, "zero_grad", self.wrap_zero_grad)

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
                "backend": backend, "pid": os.getpid(), "ops": _OPS,
                "compiled_calls": self.fast, "history": _HISTORY}
        if self.tracker is not None:
            info["tracker"] = self.tracker.state
            info["stacks"] = self.tracker.stacks_on
        self.mark("gpuprof:torch " + json.dumps(info, sort_keys=True))
        if _MODE == "native":
            atexit.register(self._mark_segments)
        if _MODE == "tensor" and backend not in ("cudaMallocAsync", "unknown"):
            _say("tensor mode asked PyTorch for backend:cudaMallocAsync but it uses %s: "
                 "single tensors are not visible, the trace shows its segments "
                 "(as in --mode native)" % backend)


def _cupti_call(fn, what):
    """Calls the recorder's fn (gpuprof_yield_cupti before torch.profiler
    starts, gpuprof_reclaim_cupti after it stops: the buffer callbacks and
    activity kinds are torch's meanwhile); says in one line if it failed."""
    lib = os.environ.get("CUDA_INJECTION64_PATH")
    if not lib:
        return
    try:
        import ctypes
        rc = getattr(ctypes.CDLL(lib), fn)()
        if rc != 0:
            _say("could not %s (error %d)" % (what, rc))
    except Exception as e:
        _say("could not %s: %r" % (what, e))


def _on_torch_imported(torch):
    global _installed, _hooks
    if _installed:
        return
    _installed = True
    try:
        _hooks = _Hooks(torch, _parts())
        _hooks.install()
        if _TRACKER:
            import gpuprof_tracker
            tracker = gpuprof_tracker.Tracker(torch, _say, _STACKS)
            tracker.on_attach.append(_hooks.tracker_attached)
            _hooks.tracker = tracker
            tracker.prepare()
        _hooks.start_memory_sampler()
        if _MODE == "native":
            atexit.register(_hooks.exit_marks)
    except Exception as e:
        _say("PyTorch hooks not installed (%r); allocations are still recorded, "
             "without layer names" % (e,))
    if _HISTORY:
        try:
            import gpuprof_history
            mark = _hooks.mark if _hooks else torch.cuda.nvtx.mark
            history = gpuprof_history.History(torch, _say, mark)
            history.start()
            atexit.register(history.write)
        except Exception as e:
            _say("--torch-history: PyTorch's allocator history not recorded (%r)" % (e,))


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
