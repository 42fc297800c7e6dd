#!/usr/bin/env python3
"""A convolutional batch search that ends in an out-of-memory error, with the
failures cuDNN gets past on the way.

Conv2d(3, 64, 3) / ReLU / Conv2d(64, 64, 3) on 512x512 images, one training
step (forward, backward, SGD) per batch, the batch doubled after each step
that fits, until PyTorch raises torch.OutOfMemoryError to the program
(caught, the search ends, exit 0). On the way cuDNN asks for algorithm
workspaces that do not fit; PyTorch catches those failures inside the
convolution and picks another algorithm: they are failures the program never
sees. Only the last one reached the program.

Prints one line per step, then `GPUPROF_TORCH_EXPECT ...` with what PyTorch
measured: fatal_request (bytes of the request named in the raised error),
fatal_step (1-based), steps_fit, num_ooms (PyTorch's own count of
OutOfMemoryErrors, those caught inside libraries included), max_allocated,
max_reserved, end_allocated.
"""
import argparse
import re
import sys

import torch
from torch import nn

TRIED = re.compile(r"Tried to allocate ([0-9.]+) (bytes|KiB|MiB|GiB|TiB)")
UNIT = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


class ConvNet(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.act = nn.ReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return self.conv2(self.act(self.conv1(x)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--first-batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--max-steps", type=int, default=20)
    ap.add_argument("--growth", type=float, default=2.0, help="batch factor after a step that fits")
    ap.add_argument("--benchmark", action="store_true", help="torch.backends.cudnn.benchmark = True")
    ap.add_argument("--channels", type=int, default=64)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("this program needs a CUDA device")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = args.benchmark
    dev = torch.device("cuda")
    model = ConvNet(args.channels).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch, step, fit, fatal, fatal_step = args.first_batch, 0, 0, 0, 0
    while step < args.max_steps:
        step += 1
        try:
            x = torch.randn(batch, 3, args.size, args.size, device=dev)
            out = model(x)
            out.square().mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
        except torch.OutOfMemoryError as e:
            m = TRIED.search(str(e))
            fatal = int(float(m.group(1)) * UNIT[m.group(2)]) if m else -1
            fatal_step = step
            print("step %d: batch %d: out of memory: %s" % (step, batch, str(e).splitlines()[0]), flush=True)
            break
        fit = step
        print("step %d: batch %d fits, allocated %.2f GiB" % (
            step, batch, torch.cuda.max_memory_allocated() / 2**30), flush=True)
        del x, out
        batch = max(batch + 1, int(batch * args.growth))
    stats = torch.cuda.memory_stats()
    print("GPUPROF_TORCH_EXPECT script=conv_doubling fatal_request=%d fatal_step=%d steps_fit=%d "
          "num_ooms=%d max_allocated=%d max_reserved=%d end_allocated=%d" % (
              fatal, fatal_step, fit, stats.get("num_ooms", -1),
              torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(),
              torch.cuda.memory_allocated()), flush=True)


if __name__ == "__main__":
    main()
