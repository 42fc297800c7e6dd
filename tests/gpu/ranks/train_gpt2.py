#!/usr/bin/env python3
"""GPT-2 small (random weights) trained for a few steps by every rank of a
torchrun job, with DDP or FSDP2, then what PyTorch measured in this rank:

  RANK r local l world w max_allocated=B max_reserved=B param_shard=B state_shard=B
       backend=B batch=N steps_done=N two_groups=B

param_shard and state_shard: the bytes of this rank's parameters and of its
optimizer's states (FSDP2: the local shards of the DTensors); two_groups:
the whole parameters of the two largest groups FSDP2 gathers (a block's,
the root's own). Two GPUs or
more: NCCL, a GPU per rank; one GPU: gloo, the ranks sharing it (NCCL
refuses two ranks on one GPU).

--batches 4,6: rank r trains with the r-th batch of the list (the last one
for ranks past its end): ranks that differ on purpose.
--grow-rank R: rank R doubles its batch every step (the others keep theirs)
until PyTorch raises OutOfMemoryError; it prints
  OOM rank r step s batch n
and exits 1 (torchrun then ends the other ranks).
Each step prints `STEP rank r step s batch n reserved=B allocated_peak=B`
(PyTorch's counters at the step's end).
--segments DIR writes DIR/rank<r>.segments.json at the end: PyTorch's own
list of its segments (torch.cuda.memory._snapshot()), to hold the trace's
segments against.

usage: torchrun --nproc-per-node N train_gpt2.py --strategy ddp|fsdp2 [--steps 3]
       [--batch 4 | --batches 4,6] [--grow-rank R] [--seq 512]
       [--layers 12] [--backend nccl|gloo] [--segments DIR]
--layers: GPT-2's blocks (12 in GPT-2 small; fewer make small traces)."""
import argparse
import json
import os
import sys

import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel

ap = argparse.ArgumentParser()
ap.add_argument("--strategy", choices=["ddp", "fsdp2"], required=True)
ap.add_argument("--steps", type=int, default=3)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--batches")
ap.add_argument("--grow-rank", type=int)
ap.add_argument("--seq", type=int, default=512)
ap.add_argument("--layers", type=int, default=12)
ap.add_argument("--backend", choices=["nccl", "gloo"])
ap.add_argument("--segments")
a = ap.parse_args()

local = int(os.environ.get("LOCAL_RANK", "0"))
ngpu = torch.cuda.device_count()
backend = a.backend or ("nccl" if ngpu >= int(os.environ.get("LOCAL_WORLD_SIZE", "1")) else "gloo")
dev = torch.device("cuda", local % ngpu)
torch.cuda.set_device(dev)
dist.init_process_group(backend, device_id=dev if backend == "nccl" else None)
rank, world = dist.get_rank(), dist.get_world_size()
batches = [int(b) for b in a.batches.split(",")] if a.batches else [a.batch]
batch = batches[min(rank, len(batches) - 1)]
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_positions=max(1024, a.seq), n_layer=a.layers)).to(dev)
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
steps_done = 0
for step in range(a.steps):
    n = batch << step if a.grow_rank == rank else batch
    try:
        x = torch.randint(0, 50257, (n, a.seq), device=dev, generator=g)
        loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
    except torch.OutOfMemoryError:
        print("OOM rank %d step %d batch %d" % (rank, step + 1, n), flush=True)
        sys.exit(1)
    steps_done += 1
    print("STEP rank %d step %d batch %d reserved=%d allocated_peak=%d" % (
        rank, step + 1, n, torch.cuda.memory_reserved(dev), torch.cuda.max_memory_allocated(dev)), flush=True)


def local_bytes(t):
    t = t.to_local() if hasattr(t, "to_local") else t
    return t.numel() * t.element_size()


params = sum(local_bytes(p) for p in model.parameters())
states = sum(local_bytes(v) for s in opt.state.values() for v in s.values()
             if isinstance(v, torch.Tensor) and v.is_cuda)
# FSDP2 gathers a group's whole parameters for its module: a block's, and
# the root's own (what no block holds); the two largest together
inner = model.module if a.strategy == "ddp" else model
whole = lambda ps: sum(p.numel() * p.element_size() for p in ps)  # noqa: E731
blocks = [whole(b.parameters()) for b in inner.transformer.h]
groups = sorted(blocks + [whole(inner.parameters()) - sum(blocks)])
two_groups = sum(groups[-2:])
if a.segments:
    segs = [{k: s.get(k) for k in ("device", "address", "total_size", "allocated_size", "stream",
                                   "segment_type", "segment_pool_id", "is_expandable")}
            for s in torch.cuda.memory._snapshot()["segments"]]
    st = torch.cuda.memory_stats(dev)
    with open(os.path.join(a.segments, "rank%d.segments.json" % rank), "w") as f:
        json.dump({"segments": segs, "stats": {k: v for k, v in st.items() if "reserved" in k or "segment" in k
                                               or "retries" in k or "ooms" in k}}, f, default=str)
print("RANK %d local %d world %d max_allocated=%d max_reserved=%d param_shard=%d state_shard=%d backend=%s "
      "batch=%d steps_done=%d two_groups=%d" % (
          rank, local, world, torch.cuda.max_memory_allocated(dev), torch.cuda.max_memory_reserved(dev),
          params, states, backend, batch, steps_done, two_groups), flush=True)
dist.destroy_process_group()
