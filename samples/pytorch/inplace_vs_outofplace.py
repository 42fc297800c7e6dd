#!/usr/bin/env python3
"""Out-of-place operations double (here: triple) the memory of a large tensor.

The story
    A preprocessing module computes relu(2 * x) on a 1 GiB batch. Written
    out of place (`x = x * 2; y = torch.relu(x)`), each operation allocates a
    new tensor as large as its input while the caller still holds the input:
    1 GiB of input + 1 GiB for `x * 2` + 1 GiB for `relu` = 3 GiB at the
    peak. In place (`x.mul_(2); torch.relu_(x)`) writes into the input's own
    memory: the peak stays at 1 GiB. Both give the same numbers (the
    checksums printed by both variants are equal).

    python3 inplace_vs_outofplace.py --variant outofplace   # peak ~3 GiB
    python3 inplace_vs_outofplace.py --variant inplace      # peak ~1 GiB

What gpuprof shows
    outofplace: every step, two 1 GiB allocations inside `fwd:<Preprocess>`
    (the module's forward): the `x * 2` result, freed when the forward
    returns, and the `relu` result, freed at the end of the step. The live
    bytes peak at 3 GiB inside `fwd:<Preprocess>`; the input batch (1 GiB,
    allocated outside any module) is the third tensor.
    inplace: no allocation inside `fwd:<Preprocess>` at all; the peak is the
    input batch alone (1 GiB).

The fix
    Use in-place operations (`mul_`, `relu_`, `add_`, `nn.ReLU(inplace=True)`)
    on tensors you no longer need, or drop references early (`del`). Do not
    use in-place ops on tensors autograd saved for backward (PyTorch raises
    an error when that would give wrong gradients); here no grad is involved.

Prints `GPUPROF_TORCH_EXPECT ...` with torch's own numbers: max_allocated
(~3 GiB / ~1 GiB), max_reserved, end_allocated, step_allocated (after each
step: ~0, the batch and the result are dropped), tensor_bytes (1 GiB).
"""
import argparse

import torch
from torch import nn
from story import MiB, cuda_device, report


class Preprocess(nn.Module):
    """y = relu(2 * x), out of place or in place."""

    def __init__(self, inplace):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        if self.inplace:
            x.mul_(2.0)  # writes into x's own memory
            torch.relu_(x)
            return x
        x = x * 2.0  # a new tensor as large as x (the caller still holds x)
        y = torch.relu(x)  # and another one
        return y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["outofplace", "inplace"], default="outofplace")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--mib", type=int, default=1024, help="size of the batch tensor in MiB")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    numel = args.mib * MiB // 4  # float32
    prep = Preprocess(inplace=args.variant == "inplace").to(dev)
    step_alloc = []
    checksum = 0.0
    for _ in range(args.steps):
        x = torch.randn(numel, device=dev)
        y = prep(x)
        checksum += y.sum().item()
        del x, y
        step_alloc.append(torch.cuda.memory_allocated(dev))

    print("%s: peak allocated %.1f MiB for a %d MiB tensor" % (
        args.variant, torch.cuda.max_memory_allocated(dev) / MiB, args.mib))
    report(dev, "inplace_vs_outofplace", args.variant, steps=args.steps,
           tensor_bytes=numel * 4, step_allocated=step_alloc, checksum=checksum)


if __name__ == "__main__":
    main()
