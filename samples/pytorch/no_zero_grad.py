#!/usr/bin/env python3
"""Training without zero_grad(): what really happens to memory.

The story
    A training loop forgets `optimizer.zero_grad()`. People often expect a
    memory leak. There is none: the first backward allocates one `.grad`
    tensor per parameter (as large as the parameter), and every later
    backward *adds into the same .grad tensors in place* (a gradient is
    computed into a temporary buffer, added, and the buffer freed). Memory
    does NOT grow after step 1. What goes wrong is the training: the
    gradients are summed over all steps so far (grad_norm_last is about
    `steps` times grad_norm_step1 here), not the memory.

    With `zero_grad(set_to_none=True)` at the end of each step the .grad
    tensors are freed between steps: between steps the memory holds the
    weights only, and backward allocates the gradients again. The peak is
    about the same in both variants (weights + gradients + activations; even
    one layer's gradient, 64 MiB, higher without zero_grad: the temporary of
    the in-place accumulation); the memory *between* steps is what differs,
    by the size of all gradients (~528 MiB here).

    python3 no_zero_grad.py --variant nozero   # between steps: weights + grads ~1056 MiB
    python3 no_zero_grad.py --variant zero     # between steps: weights ~528 MiB

    Model: 8 blocks of Linear(4096, 4096) + ReLU and a Linear(4096, 1000)
    head: ~528 MiB of fp32 weights. SGD without momentum, so that the only
    per-parameter memory besides the weights is .grad. Batch 256 (activations
    are small: 4 MiB per layer).

What gpuprof shows
    nozero: the .grad tensors are allocated in `phase:backward` of step 1,
    one per `bwd:blocks.N.fc` (64 MiB each), and live until the program
    ends; no `phase:zero_grad` range; steps 2.. allocate only short-lived
    64 MiB temporaries in backward. Live bytes are flat after step 1 (no
    leak: the rate is 0 bytes/step).
    zero: the same .grad allocations in every step's backward, each freed in
    `phase:zero_grad`; between steps the live bytes drop to the weights.

The fix
    Call `optimizer.zero_grad(set_to_none=True)` once per step (before the
    forward, or after `optimizer.step()` as here, which also frees the
    gradients' memory between steps). If you meant to accumulate gradients
    over micro-batches, do it deliberately (see grad_accumulation.py).

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated, max_reserved,
end_allocated, step_allocated (after each step), param_bytes, grad_norm_step1,
grad_norm_last (norm of blocks.0.fc.weight.grad).
"""
import argparse

import torch
import torch.nn.functional as F
from story import MLP, MiB, cuda_device, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["nozero", "zero"], default="nozero")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    model = MLP(args.width, args.depth, 1000).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    x = torch.randn(args.batch, args.width, device=dev)
    y = torch.randint(0, 1000, (args.batch,), device=dev)

    step_alloc = []
    grad_norms = []
    for _ in range(args.steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grad_norms.append(model.blocks[0].fc.weight.grad.norm().item())
        opt.step()
        if args.variant == "zero":
            opt.zero_grad(set_to_none=True)
        # (nozero: the bug, no zero_grad at all)
        del loss
        step_alloc.append(torch.cuda.memory_allocated(dev))

    print("%s: allocated after each step (MiB): %s; weights %.0f MiB" % (
        args.variant, " ".join("%.0f" % (b / MiB) for b in step_alloc), param_bytes / MiB))
    report(dev, "no_zero_grad", args.variant, steps=args.steps, param_bytes=param_bytes,
           step_allocated=step_alloc, grad_norm_step1=grad_norms[0],
           grad_norm_last=grad_norms[-1])


if __name__ == "__main__":
    main()
