#!/usr/bin/env python3
"""A training loop that a signal ends (tests/gpu/failures/run.py).

python3 loop.py [--raise SIG --at STEP] [--handle SIG] [--ignore SIG] [--seconds S]

Trains an MLP (8 x Linear(4096, 4096), AdamW) until --seconds pass; after
each step prints `step N max_allocated=B max_reserved=B t=UNIX_S` (flushed),
so that whoever sends a signal knows what PyTorch measured before it.
--raise SIG --at N: the program itself raises SIG after step N (SEGV: a
real fault, reading address 0; ABRT: os.abort()). --handle SIG: a handler
that asks the loop to stop; the program then exits 0 after the step.
--ignore SIG: the signal is ignored."""
import argparse
import ctypes
import os
import signal
import sys
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--raise", dest="raise_sig")
ap.add_argument("--at", type=int, default=3)
ap.add_argument("--handle")
ap.add_argument("--ignore")
ap.add_argument("--seconds", type=float, default=60)
a = ap.parse_args()

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU())
                              for _ in range(8)]).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
stop = False


def asked_to_stop(sig, frame):
    global stop
    stop = True


if a.handle:
    signal.signal(getattr(signal, a.handle), asked_to_stop)
if a.ignore:
    signal.signal(getattr(signal, a.ignore), signal.SIG_IGN)
print("pid %d" % os.getpid(), flush=True)
t0 = time.time()
step = 0
while time.time() - t0 < a.seconds and not stop:
    x = torch.randn(512, 4096, device=dev)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    step += 1
    print("step %d max_allocated=%d max_reserved=%d t=%.6f" % (
        step, torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(), time.time()),
        flush=True)
    if a.raise_sig and step == a.at:
        if a.raise_sig == "SIGSEGV":
            ctypes.string_at(0)
        elif a.raise_sig == "SIGABRT":
            os.abort()
        else:
            os.kill(os.getpid(), getattr(signal, a.raise_sig))
print("done %d" % step, flush=True)
