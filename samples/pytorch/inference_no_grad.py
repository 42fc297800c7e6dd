#!/usr/bin/env python3
"""Inference with and without torch.no_grad().

The story
    Predictions for a batch of 32768 rows through 12 blocks of
    Linear(2048, 2048) + ReLU (256 MiB per activation) and a Linear(2048,
    1000) head. With autograd on (`grad`: the weights require grad, as they
    do by default), every ReLU output is saved for a backward that never
    comes, so at the end of the forward all 12 are alive at once: 12 x 256
    MiB = 3 GiB on top of the input and the weights. Under
    `torch.no_grad()` (`nograd`) nothing is saved: each activation is freed
    as soon as the next one exists, and the forward needs about three
    activations at a time. The predictions are identical.

    python3 inference_no_grad.py --variant grad     # peak ~3.7 GiB
    python3 inference_no_grad.py --variant nograd   # peak ~1.2 GiB

    (The graph dies when the forward's output does: here inside
    `predict()`, so the memory after each step is the same in both variants;
    the difference is the peak.)

What gpuprof shows
    grad: one 256 MiB allocation per `fwd:blocks.N.act` (N = 0..11) that
    stays live until the forward's output is dropped after the head (all 12
    live together; the peak, ~3.7 GiB, is in `fwd:blocks.11.act`; there is no
    `phase:backward` and no `step:` mark, there is no training).
    nograd: the same allocations, each freed during the next block's
    forward; the peak is ~2.5 GiB lower.

The fix
    Wrap inference and evaluation in `torch.no_grad()` or, faster still,
    `torch.inference_mode()`; call `model.eval()` for dropout/batch-norm
    behaviour (that one does not change what autograd saves).

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated, max_reserved,
end_allocated, step_allocated (after each step), activation_bytes (256
MiB), checksum (sum of the predicted classes, equal in both variants).
"""
import argparse

import torch
from story import MLP, MiB, cuda_device, report


def predict(model, x):
    return model(x).argmax(dim=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["grad", "nograd"], default="grad")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32768)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    model = MLP(args.width, args.depth, 1000).to(dev)
    model.eval()
    step_alloc = []
    checksum = 0
    for _ in range(args.steps):
        x = torch.randn(args.batch, args.width, device=dev)
        if args.variant == "nograd":
            with torch.no_grad():
                pred = predict(model, x)
        else:
            pred = predict(model, x)  # the bug: autograd records the forward
        checksum += pred.sum().item()
        del x, pred
        step_alloc.append(torch.cuda.memory_allocated(dev))

    act = args.batch * args.width * 4
    print("%s: peak allocated %.0f MiB; one activation %.0f MiB, %d blocks" % (
        args.variant, torch.cuda.max_memory_allocated(dev) / MiB, act / MiB, args.depth))
    report(dev, "inference_no_grad", args.variant, steps=args.steps, step_allocated=step_alloc,
           activation_bytes=act, depth=args.depth, checksum=checksum)


if __name__ == "__main__":
    main()
