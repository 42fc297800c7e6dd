"""PyTorch's NVTX must reach gpuprof (it did not through libcupti).

Opens ranges with torch.cuda.nvtx (push/pop, nested, and a start/end range)
and runs a small model under torch.autograd.profiler.emit_nvtx(), which
makes every aten op an NVTX range. Prints what it opened:
  GPUPROF_TORCH_NVTX pushes=N starts=M
"""
import torch

torch.cuda.init()
x = torch.randn(256, 256, device="cuda")
pushes = 0
for i in range(3):
    torch.cuda.nvtx.range_push(f"step{i}")
    torch.cuda.nvtx.range_push("inner")
    y = x @ x
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
    pushes += 2
rid = torch.cuda.nvtx.range_start("startend")
y = y + 1
torch.cuda.nvtx.range_end(rid)
torch.cuda.nvtx.mark("a mark")

model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU()).cuda()
with torch.autograd.profiler.emit_nvtx():
    model(x).sum().backward()
torch.cuda.synchronize()
print(f"GPUPROF_TORCH_NVTX pushes={pushes} starts=1", flush=True)
