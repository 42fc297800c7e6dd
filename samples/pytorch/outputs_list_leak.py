#!/usr/bin/env python3
"""Model outputs appended to a list every step: a leak of output-sized tensors.

The story
    A small language model trains on 4 x 512 tokens per step with a vocabulary
    of 8192; its logits are 2048 x 8192 float32 = 64 MiB per step. The loop
    keeps them for an evaluation after training: `outputs.append(logits)`.
    Each list entry is the GPU tensor itself, so memory grows by 64 MiB every
    step. (Backward has already freed the activations saved in the logits'
    graph, so what leaks is the output tensor, not the whole graph; compare
    losses_with_graph.py where the graph was never backward'ed.) With
    `outputs.append(logits.detach().cpu())` the GPU copy dies with the step
    and the list grows in host memory instead (64 MiB of RAM per step; keep
    only what you need, e.g. `logits.argmax(-1).cpu()`, 16 KiB per step).
    Note that `logits.detach()` alone still leaks: it shares the GPU memory.

    python3 outputs_list_leak.py --variant gpu   # GPU memory +64 MiB per step
    python3 outputs_list_leak.py --variant cpu   # GPU memory flat

    Model: embedding(8192, 512), 2 residual MLP blocks (512 -> 2048 -> 512,
    GELU), LayerNorm, lm_head Linear(512, 8192); AdamW. ~48 MiB of weights.

What gpuprof shows
    gpu: a leak of ~64 MiB per `step:` mark, allocated in `fwd:lm_head` (the
    logits, one 64 MiB tensor per step) and never freed.
    cpu: the logits are freed every step (after the device-to-host copy,
    which the trace shows as a 64 MiB `memcpy DtoH` per step); live bytes
    are the same after every step.

The fix
    Move what you keep off the GPU (`.detach().cpu()`), and keep only what
    the later evaluation needs (predictions, not logits), or compute the
    metric on the fly.

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated, max_reserved,
end_allocated, step_allocated (after each step), leak_per_step (mean growth
per step), output_bytes (64 MiB), accuracy.
"""
import argparse

import torch
import torch.nn.functional as F
from torch import nn
from story import MiB, cuda_device, report


class MLPBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class TinyLM(nn.Module):
    def __init__(self, vocab, d, depth):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(MLPBlock(d) for _ in range(depth))
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    model = TinyLM(args.vocab, args.dim, 2).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    outputs = []
    labels = []
    step_alloc = []
    for _ in range(args.steps):
        tokens = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
        target = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
        logits = model(tokens)
        loss = F.cross_entropy(logits.view(-1, args.vocab), target.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if args.variant == "gpu":
            outputs.append(logits)  # the bug: a 64 MiB GPU tensor per step
        else:
            outputs.append(logits.detach().cpu())
        labels.append(target.cpu())
        del tokens, target, logits, loss
        step_alloc.append(torch.cuda.memory_allocated(dev))

    # the "later evaluation"
    correct = 0
    total = 0
    for out, lab in zip(outputs, labels):
        correct += (out.argmax(-1).cpu() == lab).sum().item()
        total += lab.numel()
    n = len(step_alloc)
    leak = (step_alloc[-1] - step_alloc[0]) // (n - 1) if n > 1 else 0
    out_bytes = args.batch * args.seq * args.vocab * 4
    print("%s: allocated after each step (MiB): %s" % (
        args.variant, " ".join("%.0f" % (b / MiB) for b in step_alloc)))
    print("%s: growth %.1f MiB/step; one output is %.1f MiB" % (
        args.variant, leak / MiB, out_bytes / MiB))
    report(dev, "outputs_list_leak", args.variant, steps=args.steps, step_allocated=step_alloc,
           leak_per_step=leak, output_bytes=out_bytes, accuracy=correct / total)


if __name__ == "__main__":
    main()
