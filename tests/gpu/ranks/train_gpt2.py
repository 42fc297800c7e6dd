#!/usr/bin/env python3
"""GPT-2 small (random weights) trained for a few steps by every rank of a
torchrun job, with DDP or FSDP2, then what PyTorch measured in this rank:

  RANK r local l world w max_allocated=B max_reserved=B param_shard=B state_shard=B

param_shard and state_shard: the bytes of this rank's parameters and of its
optimizer's states (FSDP2: the local shards of the DTensors). Two GPUs or
more: NCCL, a GPU per rank; one GPU: gloo, the ranks sharing it (NCCL
refuses two ranks on one GPU).

usage: torchrun --nproc-per-node N train_gpt2.py --strategy ddp|fsdp2 [--steps 3]
       [--batch 4] [--seq 512] [--backend nccl|gloo]"""
import argparse
import os

import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel

ap = argparse.ArgumentParser()
ap.add_argument("--strategy", choices=["ddp", "fsdp2"], required=True)
ap.add_argument("--steps", type=int, default=3)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--seq", type=int, default=512)
ap.add_argument("--backend", choices=["nccl", "gloo"])
a = ap.parse_args()

local = int(os.environ.get("LOCAL_RANK", "0"))
ngpu = torch.cuda.device_count()
backend = a.backend or ("nccl" if ngpu >= int(os.environ.get("LOCAL_WORLD_SIZE", "1")) else "gloo")
dev = torch.device("cuda", local % ngpu)
torch.cuda.set_device(dev)
dist.init_process_group(backend, device_id=dev if backend == "nccl" else None)
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_positions=max(1024, a.seq))).to(dev)
if a.strategy == "ddp":
    from torch.nn.parallel import DistributedDataParallel
    model = DistributedDataParallel(model, device_ids=[dev.index] if backend == "nccl" else None)
else:
    from torch.distributed.fsdp import fully_shard
    for block in model.transformer.h:
        fully_shard(block)
    fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
g = torch.Generator(device=dev).manual_seed(rank)
for step in range(a.steps):
    x = torch.randint(0, 50257, (a.batch, a.seq), device=dev, generator=g)
    loss = model(input_ids=x, labels=x).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()


def local_bytes(t):
    t = t.to_local() if hasattr(t, "to_local") else t
    return t.numel() * t.element_size()


params = sum(local_bytes(p) for p in model.parameters())
states = sum(local_bytes(v) for s in opt.state.values() for v in s.values()
             if isinstance(v, torch.Tensor) and v.is_cuda)
print("RANK %d local %d world %d max_allocated=%d max_reserved=%d param_shard=%d state_shard=%d backend=%s" % (
    rank, local, world, torch.cuda.max_memory_allocated(dev), torch.cuda.max_memory_reserved(dev),
    params, states, backend), flush=True)
dist.destroy_process_group()
