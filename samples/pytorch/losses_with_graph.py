#!/usr/bin/env python3
"""`losses.append(loss)` keeps every step's autograd graph alive: a leak.

The story
    Each training step also measures the loss on a fixed validation batch,
    with autograd on (no `torch.no_grad()`), and appends it to a list for
    plotting: `val_losses.append(val_loss)`. The list holds the tensor, the
    tensor holds its grad_fn, and the graph holds every activation saved
    for a backward that never comes: the 4 ReLU outputs (4 x 16 MiB) and
    the log-softmax output (3.9 MiB) of that forward, ~68 MiB per step. The
    memory grows by that much every step until the program ends or runs out
    of memory. With `val_losses.append(val_loss.item())` only a Python float
    is kept; the graph dies when `val_loss` is rebound next step, so the
    memory is flat.

    To be exact about what leaks: a loss that *was* backward'ed (the
    training loss) has already released its saved activations (backward
    frees them unless retain_graph=True), so appending it keeps only a
    scalar and some graph nodes: bytes, not MiB. The big leak is a stored
    tensor whose graph was never backward'ed, as here, or one backward'ed
    with retain_graph=True.

    python3 losses_with_graph.py --variant graph   # +~68 MiB after every step
    python3 losses_with_graph.py --variant item    # flat

    Model: 4 blocks of Linear(4096, 4096) + ReLU and a Linear(4096, 1000)
    head (~272 MiB of weights), SGD with momentum; batches of 1024 rows.

What gpuprof shows
    graph: a leak: live bytes grow by ~68 MiB per `step:` mark; the bytes
    that never die are allocated in `fwd:blocks.0.act` .. `fwd:blocks.3.act`
    (16 MiB each per step) and in the cross-entropy after the model's
    forward (outside any module, 3.9 MiB per step), every step, outside
    `phase:backward` (they are the validation forward's). Allocated in step
    N, still live at the end.
    item: live bytes are the same after every step (0 bytes/step).

The fix
    `losses.append(loss.item())` (or `loss.detach()`, which keeps a GPU
    scalar but no graph), and run evaluation under `torch.no_grad()` so no
    graph is recorded at all.

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated, max_reserved,
end_allocated, step_allocated (after each step, comma-separated),
leak_per_step (mean growth per step after step 1), expected_leak_per_step
(computed from the shapes).
"""
import argparse

import torch
import torch.nn.functional as F
from story import MLP, MiB, cuda_device, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["graph", "item"], default="graph")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    classes = 1000
    model = MLP(args.width, args.depth, classes).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    x_val = torch.randn(args.batch, args.width, device=dev)
    y_val = torch.randint(0, classes, (args.batch,), device=dev)

    val_losses = []
    step_alloc = []
    for _ in range(args.steps):
        x = torch.randn(args.batch, args.width, device=dev)
        y = torch.randint(0, classes, (args.batch,), device=dev)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss

        val_loss = F.cross_entropy(model(x_val), y_val)  # autograd on: a graph is recorded
        if args.variant == "graph":
            val_losses.append(val_loss)  # the bug: keeps the tensor and its graph
        else:
            val_losses.append(val_loss.item())
        step_alloc.append(torch.cuda.memory_allocated(dev))

    n = len(step_alloc)
    leak = (step_alloc[-1] - step_alloc[0]) // (n - 1) if n > 1 else 0
    act = args.batch * args.width * 4
    expected = args.depth * act + args.batch * classes * 4 if args.variant == "graph" else 0
    print("%s: allocated after each step (MiB): %s" % (
        args.variant, " ".join("%.0f" % (b / MiB) for b in step_alloc)))
    print("%s: growth %.1f MiB/step (from the shapes: %.1f MiB/step)" % (
        args.variant, leak / MiB, expected / MiB))
    mean_val = sum(float(v) for v in val_losses) / len(val_losses)
    report(dev, "losses_with_graph", args.variant, steps=args.steps, step_allocated=step_alloc,
           leak_per_step=leak, expected_leak_per_step=expected, mean_val_loss=mean_val)


if __name__ == "__main__":
    main()
