"""What the recorder costs per CUDA operation, host side and GPU side,
measured in one process with its parts switched in turns
(gpuprof_bench_record). Run under `gpuprof --trace` (any mode; --mode cuda
installs no PyTorch hooks).

  launch_cost.py [--rounds R] [--launches N] [VARIANT...]

VARIANT: the recorder's parts, GPUPROF_RECORD's names plus memory and none
(default: none memory memory,kernels memory,api memory,api,launches
all,memory), or asis: the recorder as it started (GPUPROF_RECORD), or no
recorder at all when run without gpuprof. The first is the base. CUPTI's
memory pool records cannot be switched in one process: once turned off,
CUPTI 13.0 was seen not to record stream-ordered allocations again; compare
them across processes with asis. Without pool records (tensor mode) CUPTI's
memory records are on only with `statics` beside `memory`.

For each variant and round, while the GPU sleeps (torch.cuda._sleep) so that
nothing waits for it, the host queues N elementwise kernels on a tiny tensor
and on a large one (`torch.add(.., out=)`, no allocation), then allocates
and frees N tensors (torch.empty; with PyTorch's cudaMallocAsync backend each
is a cudaMallocAsync/cudaFreeAsync). Host time per operation is measured
around the queueing; GPU time per kernel between CUDA events recorded after
the sleep and after the last kernel, when the kernels ran back to back.
Prints one LAUNCH_COST line per variant with medians over rounds and the
difference from the base, in microseconds:
  host_tiny_us host_large_us gpu_tiny_us gpu_large_us host_alloc_us

EXAMPLES
  gpuprof --trace --mode cuda -o t.json.gz bench/launch_cost.py
  PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \\
    gpuprof --trace --mode tensor -o t.json.gz bench/launch_cost.py none memory all,memory"""
import argparse
import ctypes
import os
import statistics
import time

import torch

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--rounds", type=int, default=8)
ap.add_argument("--launches", type=int, default=400)
ap.add_argument("variants", nargs="*",
                default=["none", "memory", "memory,kernels", "memory,api", "memory,api,launches", "all,memory"])
a = ap.parse_args()
if a.rounds < 1 or a.launches < 1:
    raise SystemExit("launch_cost.py: --rounds and --launches must be at least 1")
lib = os.environ.get("CUDA_INJECTION64_PATH")
switching = any(v != "asis" for v in a.variants)
if switching and not lib:
    raise SystemExit("launch_cost.py: run it under `gpuprof --trace` (or use only asis)")
record = None
if switching:
    record = ctypes.CDLL(lib).gpuprof_bench_record
    record.argtypes = [ctypes.c_char_p]
    record.restype = ctypes.c_int

dev = torch.device("cuda")
tiny_in = torch.ones(16, device=dev)
tiny_out = torch.empty_like(tiny_in)
large_in = torch.ones(1 << 22, device=dev, dtype=torch.bfloat16)
large_out = torch.empty_like(large_in)
N = a.launches


# 30 ms at up to 2 GHz: longer than the host needs to queue N operations,
# so that nothing waits for the GPU
SLEEP = 30 * 1000 * 2000


def queue_kernels(src, dst):
    """(host µs per launch, GPU µs per kernel)."""
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    t0 = time.perf_counter()
    for _ in range(N):
        torch.add(src, 1, out=dst)
    host = (time.perf_counter() - t0) / N * 1e6
    e1.record()
    torch.cuda.synchronize()
    return host, e0.elapsed_time(e1) * 1000.0 / N


def alloc_free():
    """Host µs per torch.empty + free of 1 MiB."""
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP)
    t0 = time.perf_counter()
    for _ in range(N):
        t = torch.empty(1 << 18, device=dev)
        del t
    host = (time.perf_counter() - t0) / N * 1e6
    torch.cuda.synchronize()
    return host


cols = ("host_tiny_us", "host_large_us", "gpu_tiny_us", "gpu_large_us", "host_alloc_us")
res = {v: {c: [] for c in cols} for v in a.variants}
for _ in range(2):  # warm up: code paths, the allocator's pool
    queue_kernels(tiny_in, tiny_out)
    alloc_free()
for r in range(a.rounds):
    k = r % len(a.variants)
    for v in a.variants[k:] + a.variants[:k]:
        if v != "asis":
            err = record(v.encode())
            if err != 0:
                raise SystemExit("launch_cost.py: gpuprof_bench_record(%s) failed: %d" % (v, err))
        queue_kernels(tiny_in, tiny_out)  # the first after a switch may pay for it
        ht, gt = queue_kernels(tiny_in, tiny_out)
        hl, gl = queue_kernels(large_in, large_out)
        ha = alloc_free()
        for c, x in zip(cols, (ht, hl, gt, gl, ha)):
            res[v][c].append(x)
if record is not None:
    record(b"all,memory")
base = a.variants[0]
for v in a.variants:
    parts = []
    for c in cols:
        m = statistics.median(res[v][c])
        parts.append("%s=%.2f(%+.2f)" % (c, m, m - statistics.median(res[base][c])))
    print("LAUNCH_COST variant=%s %s rounds=%d n=%d backend=%s recorder=%s" % (
        v, " ".join(parts), a.rounds, N, torch.cuda.memory.get_allocator_backend(),
        os.environ.get("GPUPROF_RECORD", "default") if lib else "none"), flush=True)
