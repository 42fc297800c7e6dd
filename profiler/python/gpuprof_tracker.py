"""Native mode: gpuprof's hook on PyTorch's caching allocator, which hands
the recorder every block, segment and out-of-memory failure as it happens
(gpuprof_alloc.cpp; the trace's torch.* events, exporters/TRACE_FORMAT.md).

At `import torch` the hook's library is found or built for this torch
(gpuprof_build.py); it is attached inside the program's own CUDA
initialisation (torch.cuda._lazy_call), after PyTorch made its allocator
and before the program allocates. Nothing here may break the program: a
failure is one "gpuprof:" line and native mode falls back to PyTorch's
sampled counts. GPUPROF_TORCH_TRACKER=0 leaves the hook out."""
import ctypes
import errno
import os


class Tracker:
    """state: "on" once attached; before that "pending", or why not."""

    def __init__(self, torch, say, stacks, env=os.environ):
        self.torch, self.say, self.stacks, self.env = torch, say, stacks, env
        self.state = "pending"
        self.stacks_on = False
        self.lib = None
        self.on_attach = []  # called once attached (the hooks stop sampling)

    def prepare(self):
        """At torch's import: the library, built if needed, and the attach
        queued for CUDA's initialisation. False (said) if it cannot be had."""
        try:
            import gpuprof_build
            path = gpuprof_build.library(self.torch, self.say, self.env)
        except Exception as e:
            return self._off("could not be built (%s)" % (e,))
        try:
            lib = ctypes.CDLL(path)
            lib.gpuprof_alloc_attach.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
            lib.gpuprof_alloc_attach.restype = ctypes.c_int
            lib.gpuprof_alloc_count.argtypes = [ctypes.c_int]
            lib.gpuprof_alloc_count.restype = ctypes.c_uint64
            lib.gpuprof_alloc_backward_begin.argtypes = []
            lib.gpuprof_alloc_backward_begin.restype = ctypes.c_uint32
            lib.gpuprof_alloc_backward_end.argtypes = [ctypes.c_uint32]
            lib.gpuprof_alloc_backward_end.restype = None
        except (OSError, AttributeError) as e:
            return self._off("could not be loaded (%s)" % (e,))
        self.lib = lib
        # runs inside the program's first CUDA call, or now if CUDA is up
        self.torch.cuda._lazy_call(self._attach)
        return True

    def _off(self, why):
        self.state = why
        self.say("PyTorch's allocator hook %s: native mode shows PyTorch's segments and "
                 "its sampled allocated bytes, not every tensor" % why)
        return False

    def _attach(self):
        # inside torch.cuda's initialisation: must not raise
        try:
            self._attach_or_say()
        except Exception as e:
            self._off("failed (%r)" % (e,))

    def _attach_or_say(self):
        path = self.env.get("CUDA_INJECTION64_PATH")
        if not path:
            self._off("has no recorder to report to")
            return
        rec = ctypes.CDLL(path)  # the recorder CUDA loaded: the same handle
        ev = ctypes.cast(rec.gpuprof_torch_alloc_event, ctypes.c_void_p)
        st = ctypes.cast(rec.gpuprof_torch_stack, ctypes.c_void_p)
        mod = ctypes.cast(rec.gpuprof_torch_in_module, ctypes.c_void_p)
        why = ctypes.create_string_buffer(512)
        rc = self.lib.gpuprof_alloc_attach(ev, st, mod, int(self.stacks), why, len(why))
        if rc == -errno.ENOTSUP and self.stacks:
            self.say("--stacks: %s; allocations are recorded without their Python lines"
                     % why.value.decode("utf-8", "replace"))
            rc = self.lib.gpuprof_alloc_attach(ev, st, mod, 0, why, len(why))
        elif rc == 0:
            self.stacks_on = bool(self.stacks)
        if rc != 0:
            reason = why.value.decode("utf-8", "replace")
            if "cudaMallocAsync" in reason:
                reason += "; --mode tensor records each tensor of that backend"
            self._off("was not attached (%s)" % reason)
            return
        self.state = "on"
        for fn in self.on_attach:
            fn()

    def backward_begin(self):
        """backward() starts on this thread (attached): its Python stack
        stands for the blocks made meanwhile whose own stack is not read
        (gpuprof_alloc_backward_begin). Returns what to hand backward_end."""
        return self.lib.gpuprof_alloc_backward_begin()

    def backward_end(self, token):
        if token is not None:
            self.lib.gpuprof_alloc_backward_end(token)

    def count(self, what):
        """The hook's counters (gpuprof_alloc_count): 0 events not taken,
        1 sizes guessed, 2-5 the stack table's."""
        return int(self.lib.gpuprof_alloc_count(what)) if self.lib else 0
