#!/usr/bin/env python3
"""Six training steps that end without exit() (tests/gpu/failures/run.py,
case exit): the recorder must finish the trace all the same.

python3 exit_job.py os_exit | thread HELPER

os_exit: os._exit(0) on the main thread, as a multiprocessing worker or a
launcher ends. thread: HELPER, a C library (exit_helper.c, loaded before
CUDA is initialised, as a program's extensions are), calls _exit(0) on a
thread of its own. Each step prints `step N max_allocated=B t=UNIX_S`; before
the end `EXIT max_allocated=B max_reserved=B`, PyTorch's own peaks."""
import ctypes
import os
import sys
import time

how = sys.argv[1]
helper = ctypes.CDLL(sys.argv[2]) if how == "thread" else None

import torch  # noqa: E402

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU())
                              for _ in range(4)]).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
print("pid %d" % os.getpid(), flush=True)
for step in range(1, 7):
    x = torch.randn(512, 4096, device=dev)
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print("step %d max_allocated=%d t=%.6f" % (step, torch.cuda.max_memory_allocated(), time.time()),
          flush=True)
print("EXIT max_allocated=%d max_reserved=%d" % (torch.cuda.max_memory_allocated(),
                                                   torch.cuda.max_memory_reserved()), flush=True)
if how == "thread":
    helper.exit_from_thread(0)
    time.sleep(60)  # the helper's thread ends the process
    sys.exit(9)
os._exit(0)
