"""A short program without training steps: allocates, waits 0.5 s, frees,
waits again. Under `gpuprof --trace --mode native` the trace must hold
gpuprof:torch.memory marks from the sampler (checked by the GPU suite)."""
import time

import torch

x = torch.empty(64 << 20, device="cuda")
time.sleep(0.5)
del x
time.sleep(0.3)
print("GPUPROF_MEMORY_MARKS ok", flush=True)
