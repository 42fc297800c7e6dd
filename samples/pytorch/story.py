"""Pieces the OOM-story samples share: the CUDA device they run on, the line
each prints with what PyTorch itself measured, and the plain MLP several of
them train. Each sample
imports this file from its own folder (Python puts a script's folder first on
sys.path)."""
import sys

import torch
from torch import nn

MiB = 1 << 20

class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))



class MLP(nn.Module):
    def __init__(self, width, depth, classes):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)



def cuda_device(name):
    """The device a story runs on (--device), seeded; a story needs CUDA, so
    anything else ends the program with one line saying so."""
    dev = torch.device(name)
    if dev.type != "cuda" or not torch.cuda.is_available():
        sys.exit("this sample needs a CUDA device")
    torch.manual_seed(0)
    return dev


def report(dev, script, variant, **fields):
    """One machine-readable line with what torch itself measured."""
    line = {
        "script": script,
        "variant": variant,
        "backend": torch.cuda.get_allocator_backend(),
        "max_allocated": torch.cuda.max_memory_allocated(dev),
        "max_reserved": torch.cuda.max_memory_reserved(dev),
        "end_allocated": torch.cuda.memory_allocated(dev),
    }
    line.update(fields)
    parts = []
    for k, v in line.items():
        if isinstance(v, (list, tuple)):
            v = ",".join(str(int(i)) for i in v)
        elif isinstance(v, bool):
            v = int(v)
        elif isinstance(v, float):
            v = repr(v)
        parts.append("%s=%s" % (k, str(v).replace(" ", "_")))
    print("GPUPROF_TORCH_EXPECT " + " ".join(parts), flush=True)

