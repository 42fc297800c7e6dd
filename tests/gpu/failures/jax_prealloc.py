#!/usr/bin/env python3
"""JAX with its default preallocation (75% of the device); prints what XLA
says it holds."""
import jax
import jax.numpy as jnp

x = jnp.ones((4096, 4096), dtype=jnp.float32)
y = (x @ x).block_until_ready()
stats = jax.devices()[0].memory_stats() or {}
print("JAX bytes_limit=%d bytes_reserved=%d peak_bytes_in_use=%d pool_bytes=%d" % (
    stats.get("bytes_limit", -1), stats.get("bytes_reserved", -1),
    stats.get("peak_bytes_in_use", -1), stats.get("pool_bytes", -1)), flush=True)
