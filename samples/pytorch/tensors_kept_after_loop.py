#!/usr/bin/env python3
"""A tensor from the loop's last iteration stays alive after the loop.

The story
    A scoring loop runs the model over some batches to log their loss, with
    autograd on (no `torch.no_grad()`), and keeps only `loss.item()`. But
    Python variables outlive their loop: after the loop `x`, `out` and
    `loss` still refer to the last iteration's tensors, and `loss` (through
    its grad_fn) keeps that iteration's whole autograd graph alive, with
    every activation saved for a backward that will never come: the 8 ReLU
    outputs (8 x 128 MiB) plus the input and the output, ~1.25 GiB. The
    training step that follows runs with that 1.25 GiB still held, and its
    peak is 1.25 GiB higher than it needs to be. The same happens inside the
    loop: iteration i's forward runs while iteration i-1's graph is still
    referenced by `out`/`loss` (they are only rebound once the new values
    exist), so the loop itself needs two graphs at once.

    python3 tensors_kept_after_loop.py --variant keep   # peak ~3.6 GiB
    python3 tensors_kept_after_loop.py --variant del    # peak ~2.3 GiB

    (The difference is the kept graph, ~1.25 GiB; after the loop, keep holds
    ~2.0 GiB (weights, target and the kept graph), del ~0.7 GiB.)

    Model: 8 blocks of Linear(4096, 4096) + ReLU and a Linear(4096, 4096)
    head (576 MiB of weights); batch 8192 x 4096 (128 MiB per activation);
    `--steps` scoring batches, then 2 training steps (SGD).

What gpuprof shows
    keep: after the last scoring iteration, ~1.25 GiB allocated in
    `fwd:blocks.N.act` (128 MiB each) and in `fwd:head` before the first
    `step:` mark is still live during the training step's forward and
    backward: at the peak (the end of step 1's forward / start of its
    `phase:backward`) those bytes are live, attributed to the scoring
    forward that made them (before step 1), and freed only at the end of
    the program.
    del: the scoring activations are freed at the end of each iteration;
    the peak is the training step's own.

The fix
    `del out, loss` (and the input) at the end of the iteration, or better
    run code that does not need gradients under `torch.no_grad()` /
    `torch.inference_mode()` so that no graph is recorded at all (see
    inference_no_grad.py). Put loops in a function so their locals die when
    it returns.

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated (over the whole run),
max_reserved, end_allocated, step_allocated (after each scoring iteration),
loop_peak, after_loop_allocated, train_peak (peak during the training steps).
"""
import argparse

import torch
import torch.nn.functional as F
from torch import nn
from story import Block, MiB, cuda_device, report


class MLP(nn.Module):
    def __init__(self, width, depth, out_features):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, out_features)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["keep", "del"], default="keep")
    ap.add_argument("--steps", type=int, default=4, help="scoring iterations")
    ap.add_argument("--train-steps", type=int, default=2)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    model = MLP(args.width, args.depth, args.width).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    target = torch.randn(args.batch, args.width, device=dev)

    # Scoring loop: autograd is on (no torch.no_grad()), only the number is used.
    scores = []
    step_alloc = []
    for _ in range(args.steps):
        x = torch.randn(args.batch, args.width, device=dev)
        out = model(x)
        loss = F.mse_loss(out, target)
        scores.append(loss.item())
        if args.variant == "del":
            del x, out, loss
        step_alloc.append(torch.cuda.memory_allocated(dev))
    # keep: x, out and loss (and loss's graph) are still alive here
    after_loop = torch.cuda.memory_allocated(dev)
    loop_peak = torch.cuda.max_memory_allocated(dev)
    loop_reserved_peak = torch.cuda.max_memory_reserved(dev)

    torch.cuda.reset_peak_memory_stats(dev)
    for _ in range(args.train_steps):
        xt = torch.randn(args.batch, args.width, device=dev)
        train_loss = F.mse_loss(model(xt), target)
        train_loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del xt, train_loss
    train_peak = torch.cuda.max_memory_allocated(dev)
    train_reserved_peak = torch.cuda.max_memory_reserved(dev)

    print("%s: allocated after the loop %.0f MiB; peak in the loop %.0f MiB, "
          "in training %.0f MiB" % (args.variant, after_loop / MiB, loop_peak / MiB,
                                    train_peak / MiB))
    report(dev, "tensors_kept_after_loop", args.variant,
           max_allocated=max(loop_peak, train_peak),
           max_reserved=max(loop_reserved_peak, train_reserved_peak),
           steps=args.steps, train_steps=args.train_steps, step_allocated=step_alloc,
           loop_peak=loop_peak, after_loop_allocated=after_loop, train_peak=train_peak,
           activation_bytes=args.batch * args.width * 4, mean_score=sum(scores) / len(scores))


if __name__ == "__main__":
    main()
