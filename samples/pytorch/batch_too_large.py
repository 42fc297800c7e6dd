#!/usr/bin/env python3
"""A batch too large for the GPU: CUDA out of memory in the forward, then recovery.

The story
    A training step on an MLP (8 blocks of Linear(4096, 4096) + ReLU, a
    Linear(4096, 10) head, 512 MiB of weights) with a batch so large that one
    activation (batch x 4096 x 4 bytes) is 1/6 of the GPU's total memory
    (13.2 GiB on an 80 GB H100; the batch is computed from
    `torch.cuda.get_device_properties().total_memory`, so it fails on any
    GPU). Autograd keeps every ReLU output for backward, so the forward holds
    the input plus one more activation per block:

        input x                 1 activation
        block 0: fc -> act      2 kept (+1 transient fc output)
        block 1                 3 kept
        block 2                 4 kept
        block 3: fc output      5 live, act needs a 6th: 6 x 1/6 of the GPU
                                + weights + CUDA context > total -> OOM

    The request that fails is exactly one activation (S = batch x 4096 x 4
    bytes, a multiple of 2 MiB so that no allocator rounding changes it), in
    `blocks.3.act` (0-based; earlier if the GPU is shared). The script
    catches `torch.cuda.OutOfMemoryError`, prints the request size it parses
    from the message (native allocator: "Tried to allocate 13.20 GiB";
    cudaMallocAsync backend: "Requested : 13.20 GiB"), frees everything
    (the exception's traceback held the partial forward's tensors),
    `torch.cuda.empty_cache()`, and trains `--steps` steps with a batch 32 x
    smaller. Exit status 0.

What gpuprof shows
    An `oom` event: `cudaMalloc` (native mode) or `cudaMallocAsync` (tensor
    mode; `cuMemAllocAsync`, the driver call inside it, with GPUPROF_PATCH=0)
    of S bytes, failed, with the device's free and total memory at
    that moment, inside `fwd:blocks.3.act` of the first forward (before any
    `step:` mark). Live at the OOM: the input batch (allocated outside any
    module, ~S), the ReLU outputs of `fwd:blocks.0.act` .. `fwd:blocks.2.act`
    (S each), the `fwd:blocks.3.fc` output (S), and the weights: ~5 S +
    512 MiB. Then the live bytes drop to the weights, and the small-batch
    steps follow (`step:1`, `step:2`) with a peak of ~5 GiB.

The fix
    A smaller batch (what the script does), with gradient accumulation to
    keep the effective batch (grad_accumulation.py), activation
    checkpointing (`torch.utils.checkpoint`), or mixed precision
    (amp_vs_fp32.py). The OOM request (one activation) and what was live
    (the saved activations of the blocks before it) tell how far off it is.

Prints `GPUPROF_TORCH_EXPECT ...`: oom=1, oom_request_bytes (computed S),
oom_request_msg_bytes (parsed from the message, 2 decimals), oom_block,
oom_phase_peak, big_batch, small_batch, small_peak, step_allocated (after
each small-batch step), max_allocated/max_reserved (over the whole run),
end_allocated, total_memory.
"""
import argparse
import gc
import re
import sys

import torch
import torch.nn.functional as F
from torch import nn
from story import Block, MiB, cuda_device, report

UNITS = {"bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


class MLP(nn.Module):
    def __init__(self, width, depth, classes):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, classes)
        self.reached = -1  # progress, for the report: the block running last

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            self.reached = i
            x = block(x)
        return self.head(x)


def parse_request(msg):
    """The size PyTorch says it tried to allocate, in bytes (0 if not found)."""
    m = re.search(r"(?:Tried to allocate|Requested\s*:)\s*([0-9.]+)\s*(bytes|B|KiB|MiB|GiB|TiB)",
                  msg)
    if not m:
        return 0
    return int(float(m.group(1)) * UNITS[m.group(2)])


def train_step(model, opt, batch, width, dev):
    x = torch.randn(batch, width, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=2, help="training steps with the small batch")
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--big-batch", type=int, default=0,
                    help="rows of the batch that fails (default: 1/6 of the GPU per activation)")
    ap.add_argument("--shrink", type=int, default=32, help="small batch = big batch / SHRINK")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    total = torch.cuda.get_device_properties(dev).total_memory
    row_bytes = args.width * 4  # one float32 row of an activation
    big = args.big_batch or (total // 6) // row_bytes
    big -= big % 128  # 128 rows x 16 KiB = 2 MiB: no rounding by the allocator
    small = max(128, big // args.shrink)
    small -= small % 128
    request = big * row_bytes
    print("GPU total %.2f GiB; big batch %d rows (%.2f GiB per activation), small batch %d"
          % (total / 2**30, big, request / 2**30, small), flush=True)

    model = MLP(args.width, args.depth, 10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    oom = False
    msg = ""
    try:
        train_step(model, opt, big, args.width, dev)
    except torch.cuda.OutOfMemoryError as e:
        oom = True
        msg = str(e)
    # The exception (and its traceback, which held the partial forward's
    # tensors) is gone once the except block ends; free the cached blocks too.
    opt.zero_grad(set_to_none=True)
    gc.collect()
    torch.cuda.empty_cache()
    oom_block = model.reached
    oom_phase_peak = torch.cuda.max_memory_allocated(dev)
    oom_phase_reserved = torch.cuda.max_memory_reserved(dev)
    msg_bytes = parse_request(msg)
    first = msg.strip().splitlines()[0] if msg.strip() else ""
    print("OOM: %s" % (first if oom else "none (the big batch fit!)"), flush=True)
    if oom:
        print("OOM request from the message: %d bytes (%.2f GiB); one activation is %d bytes; "
              "failed in blocks.%d" % (msg_bytes, msg_bytes / 2**30, request, oom_block), flush=True)
    print("recovered: allocated %.0f MiB, reserved %.0f MiB" % (
        torch.cuda.memory_allocated(dev) / MiB, torch.cuda.memory_reserved(dev) / MiB), flush=True)

    torch.cuda.reset_peak_memory_stats(dev)
    step_alloc = []
    losses = []
    for _ in range(args.steps):
        losses.append(train_step(model, opt, small, args.width, dev))
        step_alloc.append(torch.cuda.memory_allocated(dev))
    small_peak = torch.cuda.max_memory_allocated(dev)
    small_reserved = torch.cuda.max_memory_reserved(dev)
    print("small batch %d: %d steps, peak %.0f MiB, last loss %.4f" % (
        small, args.steps, small_peak / MiB, losses[-1]))

    report(dev, "batch_too_large", "-",
           max_allocated=max(oom_phase_peak, small_peak),
           max_reserved=max(oom_phase_reserved, small_reserved),
           total_memory=total, oom=oom, oom_request_bytes=request,
           oom_request_msg_bytes=msg_bytes, oom_block=oom_block,
           oom_phase_peak=oom_phase_peak, big_batch=big, small_batch=small,
           small_peak=small_peak, steps=args.steps, step_allocated=step_alloc)
    if not oom:
        sys.exit("expected an out-of-memory error with batch %d" % big)


if __name__ == "__main__":
    main()
