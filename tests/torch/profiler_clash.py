"""torch.profiler inside a program traced by gpuprof: one CUPTI subscriber per
process, so the two clash. The program must still run correctly and the
gpuprof trace must stay valid. Prints:
  GPUPROF_CLASH ok=1 profiler_events=N result=<checksum>
"""
import torch

x = torch.randn(512, 512, device="cuda")
ref = (x @ x).sum().item()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(3):
        y = (x @ x).sum()
    torch.cuda.synchronize()
res = y.item()
n = len(prof.events())
z = torch.empty(1 << 20, device="cuda")  # memory after the profiler is gone
del z
torch.cuda.synchronize()
print(f"GPUPROF_CLASH ok={int(abs(res - ref) < 1e-3 * abs(ref) + 1e-3)} profiler_events={n} result={res:.3f}",
      flush=True)
