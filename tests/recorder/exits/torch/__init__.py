"""A stand-in for torch, so that tests/gpu/failures/run.py's exit and
early_kill cases run their jobs (loop.py, exit_job.py) under the launcher
without a GPU (test_exits.py's CMake test recorder_exits_gpu_cases): only
what those jobs call. CUDA's initialisation loads the recorder as CUDA does
(CUDA_INJECTION64_PATH, InitializeInjection; its CUPTI is stub_cupti.c);
tensors are blocks handed to the recorder's entry point for PyTorch's
allocator, as native mode's hook hands them, their bytes counted as
max_memory_allocated() counts; each optimizer step marks step:N through
NVTX (job_steps.c's job_mark, $GP_EXIT_JOB_LIB), as the PyTorch hooks
do."""
import ctypes
import os
import threading
import time

__version__ = "0+stand-in"

_ALLOC, _FREE, _ATTACH = 1, 2, 8  # profiler/torch_alloc.h's gp_ta_type
_st = {"rec": None, "job": None, "allocated": 0, "max": 0, "next": 0x7F0000000000, "step": 0}


class _Event(ctypes.Structure):
    """profiler/torch_alloc.h's struct gp_ta_event (GP_TA_VERSION 1)."""
    _fields_ = [("version", ctypes.c_uint32), ("type", ctypes.c_uint16), ("flags", ctypes.c_uint16),
                ("ts", ctypes.c_uint64), ("addr", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("requested", ctypes.c_uint64), ("stream", ctypes.c_uint64), ("allocated", ctypes.c_uint64),
                ("reserved", ctypes.c_uint64), ("free", ctypes.c_uint64), ("stack", ctypes.c_uint32),
                ("tid", ctypes.c_uint32), ("device", ctypes.c_int32), ("reserved0", ctypes.c_uint32)]


def _send(kind, addr, nbytes):
    ev = _Event(version=1, type=kind, ts=time.time_ns(), addr=addr, bytes=nbytes, requested=nbytes,
                tid=threading.get_native_id())
    _st["rec"].gpuprof_torch_alloc_event(ctypes.byref(ev))


def _init_cuda():
    if _st["rec"] is not None:
        return
    path = os.environ["CUDA_INJECTION64_PATH"]
    os.environ["NVTX_INJECTION64_PATH"] = path  # NVTX loads its tool at its first call
    _st["rec"] = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    _st["rec"].InitializeInjection()
    _st["job"] = ctypes.CDLL(os.environ["GP_EXIT_JOB_LIB"])
    _send(_ATTACH, 0, 0)


def _alloc(nbytes):
    _init_cuda()
    addr = _st["next"]
    _st["next"] += nbytes + (1 << 20)
    _st["allocated"] += nbytes
    _st["max"] = max(_st["max"], _st["allocated"])
    _send(_ALLOC, addr, nbytes)
    return addr, nbytes


class Tensor:
    def __init__(self, nbytes):
        self._block = _alloc(nbytes)

    def __del__(self):
        _st["allocated"] -= self._block[1]
        _send(_FREE, self._block[0], 0)

    def square(self):
        return Tensor(self._block[1])

    def mean(self):
        return Tensor(512)

    def backward(self):
        Tensor(3 << 20)  # the gradients, freed at once


def manual_seed(seed):
    pass


def device(name):
    return name


def randn(*shape, device=None):
    n = 4
    for d in shape:
        n *= d
    return Tensor(n)


class _Module:
    def __init__(self, *args):
        self._weights = None

    def to(self, dev):
        self._weights = Tensor(16 << 20)
        return self

    def parameters(self):
        return [self]

    def __call__(self, x):
        time.sleep(0.004)  # a forward pass's time
        return Tensor(x._block[1] * 2)


class nn:
    Sequential = Linear = ReLU = _Module


class _Optimizer:
    def __init__(self, params, lr=0.0):
        pass

    def step(self):
        _st["step"] += 1
        _st["job"].job_mark(("step:%d" % _st["step"]).encode())

    def zero_grad(self, set_to_none=True):
        pass


class optim:
    AdamW = _Optimizer


class cuda:
    @staticmethod
    def synchronize():
        time.sleep(0.002)

    @staticmethod
    def max_memory_allocated():
        return _st["max"]

    @staticmethod
    def max_memory_reserved():
        return _st["max"]
