#!/usr/bin/env python3
"""Gradient accumulation over K micro-batches vs one big batch.

The story
    The batch of 16384 rows is trained on in one forward/backward
    (`bigbatch`) or as K = 8 micro-batches of 2048 rows whose gradients add
    up in `.grad` before one optimizer step (`accum`, loss divided by K so
    that the gradient is the same mean). Autograd saves each block's ReLU
    output for backward: 8 x 256 MiB = 2 GiB for the big batch, 8 x 32 MiB =
    256 MiB for a micro-batch. Weights (528 MiB), gradients (528 MiB), SGD
    momentum (528 MiB) and the batch itself (256 MiB) are the same in both.
    Both make the same update (update_norm, the norm of all weight changes,
    is printed by both and agrees to float rounding).

    python3 grad_accumulation.py --variant bigbatch   # peak ~4 GiB
    python3 grad_accumulation.py --variant accum      # peak ~2.2 GiB

    Model: 8 blocks of Linear(4096, 4096) + ReLU, a Linear(4096, 1000) head,
    cross-entropy, SGD with momentum 0.9.

What gpuprof shows
    bigbatch: each step's forward allocates 256 MiB per `fwd:blocks.N.act`
    (ReLU outputs saved for backward), 2 GiB in all, freed block by block in
    `phase:backward`; the peak is at the start of backward.
    accum: K forwards and K `phase:backward` ranges per `step:` mark, each
    forward allocating only 32 MiB per `fwd:blocks.N.act`; the peak is ~1.8
    GiB lower, and made of weights + grads + momentum + batch.

The fix
    When activations are what does not fit, split the batch and accumulate
    (`(loss / K).backward()` per micro-batch, `optimizer.step()` and
    `zero_grad()` once per K). The optimizer sees the same gradient (for a
    mean loss and equal micro-batches; BatchNorm statistics would differ).

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated, max_reserved,
end_allocated, step_allocated (after each optimizer step), micro (K),
update_norm, fwd_retained (bytes the last forward added: its saved
activations and output).
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from story import MLP, MiB, cuda_device, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["accum", "bigbatch"], default="accum")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--micro", type=int, default=8, help="K micro-batches per step (accum)")
    ap.add_argument("--batch", type=int, default=16384)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)
    if args.batch % args.micro:
        sys.exit("--batch must be a multiple of --micro")

    model = MLP(args.width, args.depth, 1000).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    initial = [p.detach().cpu() for p in model.parameters()]
    x = torch.randn(args.batch, args.width, device=dev)
    y = torch.randint(0, 1000, (args.batch,), device=dev)
    k = args.micro if args.variant == "accum" else 1

    step_alloc = []
    fwd_retained = 0
    for _ in range(args.steps):
        for xm, ym in zip(x.chunk(k), y.chunk(k)):
            before = torch.cuda.memory_allocated(dev)
            logits = model(xm)
            loss = F.cross_entropy(logits, ym) / k
            fwd_retained = torch.cuda.memory_allocated(dev) - before
            del logits
            loss.backward()
            del loss
        opt.step()
        opt.zero_grad(set_to_none=True)
        step_alloc.append(torch.cuda.memory_allocated(dev))

    sq = 0.0
    for p, p0 in zip(model.parameters(), initial):
        sq += (p.detach().cpu().double() - p0.double()).pow(2).sum().item()
    update_norm = math.sqrt(sq)
    print("%s: K=%d, peak allocated %.0f MiB, one forward keeps %.0f MiB, update norm %.6e" % (
        args.variant, k, torch.cuda.max_memory_allocated(dev) / MiB, fwd_retained / MiB,
        update_norm))
    report(dev, "grad_accumulation", args.variant, steps=args.steps, micro=k,
           batch=args.batch, step_allocated=step_alloc, fwd_retained=fwd_retained,
           update_norm=update_norm)


if __name__ == "__main__":
    main()
