"""What gpuprof's per-event costs are, in microseconds, CPU-bound:
NVTX push/pop pairs (torch._C._nvtx), and a forward+backward through 200
tiny modules (so module hooks dominate). Prints:
  GPUPROF_COST nvtx_pair_us=.. module_step_us_per_module=..
Run plain and under gpuprof to compare."""
import time

import torch

raw = torch._C._nvtx
N = 100000
t0 = time.perf_counter()
for _ in range(N):
    raw.rangePushA("x")
    raw.rangePop()
pair = (time.perf_counter() - t0) / N * 1e6

layers = [torch.nn.Linear(8, 8) for _ in range(200)]
model = torch.nn.Sequential(*layers).cuda()
x = torch.randn(4, 8, device="cuda", requires_grad=True)
opt = torch.optim.SGD(model.parameters(), lr=0.0)
for _ in range(5):
    model(x).sum().backward()
torch.cuda.synchronize()
steps = 30
t0 = time.perf_counter()
for _ in range(steps):
    model(x).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
per = (time.perf_counter() - t0) / steps / 200 * 1e6
print("GPUPROF_COST nvtx_pair_us=%.3f module_step_us_per_module=%.2f" % (pair, per), flush=True)
