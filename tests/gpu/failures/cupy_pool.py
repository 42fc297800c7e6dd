#!/usr/bin/env python3
"""CuPy holding 256 MiB in its memory pool; prints what the pool says."""
import cupy

a = cupy.zeros(256 * 2**20, dtype=cupy.uint8)
cupy.cuda.runtime.deviceSynchronize()
pool = cupy.get_default_memory_pool()
print("CUPY pool_used=%d pool_total=%d" % (pool.used_bytes(), pool.total_bytes()), flush=True)
del a
