#!/usr/bin/env python3
"""Mixed precision (bf16 autocast) vs fp32: what gets smaller and what does not.

The story
    A stack of 8 transformer-style MLP blocks (x + fc2(gelu(fc1(norm(x)))),
    d = 1024, hidden 4096) trains on 16 x 1024 tokens with AdamW. Under
    `torch.autocast("cuda", dtype=torch.bfloat16)` the weights stay fp32
    (autocast casts *copies* of them to bf16 for each matmul), so weights
    (260 MiB), gradients (260 MiB, fp32: they are the fp32 leaves' grads)
    and AdamW's two states (520 MiB) are the same in both variants. What
    shrinks is the activations saved for backward: the Linear inputs and
    the GELU input/output are bf16 (half), but LayerNorm runs in fp32
    under autocast and the residual stream stays fp32 (fp32 + bf16 -> fp32),
    so the saved activations drop to ~55-60%, not 50%:

        per block, per token    fp32            bf16 autocast
        LayerNorm input         4d bytes        4d (fp32)
        fc1 input               4d (LN output)  2d (bf16 copy)
        GELU input              16d             8d
        fc2 input               16d             8d
        total                   40d             22d

    plus, with autocast, the bf16 copies of the weights (130 MiB), cached
    for the forward and saved for backward. One forward keeps ~5.1 GiB in
    fp32 and ~3.0 GiB with autocast.

    python3 amp_vs_fp32.py --variant fp32   # peak ~6.3 GiB
    python3 amp_vs_fp32.py --variant amp    # peak ~4.1 GiB

What gpuprof shows
    In both: the weights before the first forward, grads allocated per
    `bwd:blocks.N.fc1`/`fc2` in `phase:backward`, AdamW's states allocated in
    `phase:optimizer.step` of step 1 (520 MiB, fp32 in both). The forward's
    allocations in `fwd:blocks.N.fc1` / `fwd:blocks.N.act` are 256 MiB each in
    fp32 and 128 MiB each (bf16) with amp; `fwd:blocks.N.norm` keeps 64 MiB
    fp32 outputs in both (with amp they are freed once fc1 has its bf16
    copy); with amp, `fwd:blocks.N.fc1`/`fc2` also allocate the 8 MiB bf16
    weight copies in the first forward of each step. The peak (start of
    `phase:backward`) is ~2.2 GiB lower with amp.

The fix
    For activation-bound training use autocast (bf16 on Ampere and later;
    fp16 needs a GradScaler). It does not shrink weights, grads or optimizer
    states: for those see FSDP/ZeRO sharding, 8-bit optimizers, or bf16
    weights.

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated, max_reserved,
end_allocated, step_allocated (after each step), fwd_retained (bytes the
last forward + loss added), param_bytes, loss (last).
"""
import argparse
import contextlib

import torch
import torch.nn.functional as F
from torch import nn
from story import MiB, cuda_device, report


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, d, depth):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, d)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["amp", "fp32"], default="amp")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = cuda_device(args.device)

    model = Net(args.dim, args.depth).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    x = torch.randn(args.batch, args.seq, args.dim, device=dev)
    target = torch.randn(args.batch, args.seq, args.dim, device=dev)

    def autocast():
        if args.variant == "amp":
            return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    step_alloc = []
    fwd_retained = 0
    last_loss = 0.0
    for _ in range(args.steps):
        before = torch.cuda.memory_allocated(dev)
        with autocast():
            loss = F.mse_loss(model(x), target)
        fwd_retained = torch.cuda.memory_allocated(dev) - before
        loss.backward()  # outside autocast, as recommended
        opt.step()
        opt.zero_grad(set_to_none=True)
        last_loss = loss.item()
        del loss
        step_alloc.append(torch.cuda.memory_allocated(dev))

    print("%s: peak allocated %.0f MiB; one forward keeps %.0f MiB; weights %.0f MiB" % (
        args.variant, torch.cuda.max_memory_allocated(dev) / MiB, fwd_retained / MiB,
        param_bytes / MiB))
    report(dev, "amp_vs_fp32", args.variant, steps=args.steps, step_allocated=step_alloc,
           fwd_retained=fwd_retained, param_bytes=param_bytes, loss=last_loss)


if __name__ == "__main__":
    main()
