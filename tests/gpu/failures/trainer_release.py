#!/usr/bin/env python3
"""A Trainer-style loop (model, AdamW, cuBLAS matmuls, a validation pass)
that releases PyTorch's cache before it exits, as Lightning's Trainer does;
prints PyTorch's own peaks."""
import torch

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(2048, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 2048)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(6):
    x = torch.randn(1024, 2048, device=dev)
    model(x).float().pow(2).mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
with torch.no_grad():
    model(torch.randn(4096, 2048, device=dev)).sum().item()
torch.cuda.synchronize()
print("TRAINER max_allocated=%d max_reserved=%d" % (torch.cuda.max_memory_allocated(),
                                                      torch.cuda.max_memory_reserved()), flush=True)
del model, opt
torch.cuda.empty_cache()
