#!/usr/bin/env python3
"""A job of several ranks on the GPUs there are (torchrun --nproc-per-node N;
two ranks may share one GPU): each rank holds memory of its own size (rank
r: (r + 1) x 256 MiB of weights), runs 3 steps of a gloo all-reduce of its
gradient, and prints what PyTorch measured:
`rank R local L world W max_allocated=B max_reserved=B`.
gloo by default (NCCL refuses two ranks on one GPU), its all-reduce on a
copy in host memory; --backend nccl (a GPU per rank): NCCL's, on the GPU.

usage: torchrun --nproc-per-node N two_ranks.py [--backend gloo|nccl]"""
import argparse
import os

import torch
import torch.distributed as dist

ap = argparse.ArgumentParser()
ap.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
backend = ap.parse_args().backend
local = int(os.environ.get("LOCAL_RANK", "0"))
dev = torch.device("cuda", local % torch.cuda.device_count())
torch.cuda.set_device(dev)
dist.init_process_group(backend, device_id=dev if backend == "nccl" else None)
rank, world = dist.get_rank(), dist.get_world_size()
w = torch.randn((rank + 1) * 64, 1024, 1024, device=dev)  # (rank + 1) x 256 MiB
for step in range(3):
    g = (w * 2).sum(dim=0)  # a temporary of the same size, then 4 MiB
    dist.all_reduce(g if backend == "nccl" else g.cpu())
    del g
    torch.cuda.synchronize()
print("rank %d local %d world %d max_allocated=%d max_reserved=%d" % (
    rank, local, world, torch.cuda.max_memory_allocated(dev), torch.cuda.max_memory_reserved(dev)), flush=True)
dist.destroy_process_group()
