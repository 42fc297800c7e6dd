#!/usr/bin/env python3
"""Doubling the batch until CUDA runs out of memory: the largest batch that fits.

The story
    A batch-size search as training scripts often write it (Lightning's
    BatchSizeFinder does the same in its "power" mode): train one step with
    a small batch and, while it fits, double the batch and train another.
    The step that does not fit raises `torch.OutOfMemoryError` ("CUDA out
    of memory. Tried to allocate 9.50 GiB. GPU 0 has a total capacity of
    ..."); the script catches it, frees what the failed step held and keeps
    the last batch that fit. Exit status 0.

    Model: an MLP of 8 blocks of Linear(1024, 1024) + ReLU and a
    Linear(1024, 10) head (32 MiB of weights), SGD. Per row of the batch, a
    training step holds the input and every block's ReLU output (4 KiB
    each, kept for the backward) and two or three more in flight: about
    11 x 4 KiB. The first batch is computed from the GPU's total memory
    (`torch.cuda.get_device_properties().total_memory`) so that the 9th
    step (8 doublings) needs about 2/3 of the GPU and the 10th about 4/3:
    the 10th fails, in its forward, on any GPU. On an 80 GB H100: first
    batch ~4,900 rows, the last that fits ~1.2 M rows (4.75 GiB per
    activation), the one that fails ~2.5 M rows (9.50 GiB per activation).
    Each size is a multiple of 2 MiB, so the request PyTorch names is one
    activation exactly.

    python3 batch_doubling.py     # ~10 steps, a few seconds; exit 0

What gpuprof shows
    One step per `step:` mark, the peak of each about twice the last. In
    the 10th, an out-of-memory incident that PyTorch raised, in the forward
    of one of the later blocks (`fwd:blocks.N.fc` or `fwd:blocks.N.act`):
    its request is the size of PyTorch's own message ("Tried to allocate
    9.50 GiB"), and live at that moment are the failing batch's input and
    the ReLU outputs of the blocks before N. Failed `cudaMalloc`s of the
    same size before it, which PyTorch got past by releasing the blocks
    it had cached for the smaller batches, are incidents too, not raised.
    The allocated peak is that of the failed forward, just before the
    failure.

The fix
    Keep the last batch that fit, with a margin (the peak grows with the
    batch, and the next data or sequence length may be larger); or compute
    the batch from what one row takes (the peak of a small step less the
    weights, over its rows) instead of by trial. For a larger effective
    batch: gradient accumulation (grad_accumulation.py), activation
    checkpointing, mixed precision (amp_vs_fp32.py).

Prints `GPUPROF_TORCH_EXPECT ...`: oom=1, failed_batch (rows of the step
that failed), fit_batch (the last that fit), first_batch, doublings (before
the failing batch), tried (the size PyTorch's message names, spaces
removed: `tried=9.50GiB`), activation_bytes (one activation of the failing
batch), step_allocated (after each step that fit), max_allocated and
max_reserved (over the whole run), end_allocated, total_memory.
"""
import argparse
import gc
import re
import sys

import torch
import torch.nn.functional as F
from story import MLP, MiB, cuda_device, report

# native allocator: "Tried to allocate 9.50 GiB"; cudaMallocAsync: "Requested : 9.50 GiB"
TRIED = re.compile(r"(?:Tried to allocate|Requested\s*:)\s*([0-9.]+\s*(?:bytes|KiB|MiB|GiB|TiB))")


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
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--first-batch", type=int, default=0,
                    help="rows of the first step (default: from the GPU's total memory)")
    ap.add_argument("--doublings", type=int, default=8,
                    help="doublings after which a step needs about 2/3 of the GPU")
    ap.add_argument("--max-steps", type=int, default=24, help="give up after this many steps")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    if args.width < 1 or args.depth < 1 or args.first_batch < 0 or not 0 <= args.doublings <= 30:
        ap.error("--width and --depth must be positive, --doublings within 0-30")
    dev = cuda_device(args.device)

    total = torch.cuda.get_device_properties(dev).total_memory
    row_bytes = (args.depth + 3) * args.width * 4  # one row of the batch at a step's peak
    first = args.first_batch or (total * 2 // 3) // (row_bytes << args.doublings)
    # 64 rows of 4 KiB (the default width) are 256 KiB: from the 4th step on
    # an activation is whole 2 MiB, which the allocator does not round up,
    # so the request PyTorch names is one activation
    first = max(64, first - first % 64)
    print("GPU total %.2f GiB; first batch %d rows, doubled after each step that fits"
          % (total / 2**30, first), flush=True)

    model = MLP(args.width, args.depth, 10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    batch, fit, failed, steps, msg = first, 0, 0, 0, ""
    step_alloc = []
    while steps < args.max_steps:
        steps += 1
        try:
            loss = train_step(model, opt, batch, args.width, dev)
        except torch.OutOfMemoryError as e:
            failed, msg = batch, str(e)
            break
        fit = batch
        step_alloc.append(torch.cuda.memory_allocated(dev))
        print("step %d: batch %d fits (%.2f GiB per activation), loss %.4f" % (
            steps, batch, batch * args.width * 4 / 2**30, loss), flush=True)
        batch *= 2
    # The exception's traceback held the failed step's frames and their
    # tensors; it went with the except block. Free the cached blocks too.
    opt.zero_grad(set_to_none=True)
    gc.collect()
    torch.cuda.empty_cache()

    m = TRIED.search(msg)
    tried = m.group(1).replace(" ", "") if m else "unknown"
    if failed:
        said = (msg.strip().splitlines() or ["(no message)"])[0]
        print("step %d: batch %d failed: %s" % (steps, failed, said), flush=True)
        if fit:
            print("largest batch that fits: %d rows, the first doubled %d times" % (
                fit, steps - 2), flush=True)
        else:
            print("even the first batch failed", flush=True)
    print("recovered: allocated %.0f MiB, reserved %.0f MiB" % (
        torch.cuda.memory_allocated(dev) / MiB, torch.cuda.memory_reserved(dev) / MiB), flush=True)

    report(dev, "batch_doubling", "-", total_memory=total, oom=bool(failed),
           failed_batch=failed, fit_batch=fit, first_batch=first, doublings=steps - 1,
           tried=tried, activation_bytes=failed * args.width * 4, steps=len(step_alloc),
           step_allocated=step_alloc)
    if not failed:
        sys.exit("expected an out-of-memory error within %d steps" % args.max_steps)


if __name__ == "__main__":
    main()
