"""A long job for the flight recorder (gpuprof --trace --window): an MLP
trained STEPS steps, each leaking 16 MiB, asking for a dump with SIGUSR1
halfway (under the flight recorder only); the peak comes in the last steps, where PyTorch's own peak is
measured (reset_peak_memory_stats at the first of them) and written to
RESULT as JSON. With oom, a request past the device's memory ends it."""
import json
import os
import signal
import sys
import time

import torch

steps, result = int(sys.argv[1]), sys.argv[2]
oom = len(sys.argv) > 3 and sys.argv[3] == "oom"
pause = float(os.environ.get("STEP_PAUSE", "0.05"))
dev = "cuda"
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).to(dev)
opt = torch.optim.AdamW(model.parameters())
kept = []
last = 5
out = {"steps": steps}
for step in range(1, steps + 1):
    if step == steps - last + 1:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    x = torch.randn(512, 2048, device=dev)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    kept.append(torch.empty(16 << 20, dtype=torch.uint8, device=dev))
    torch.cuda.synchronize()
    if step == steps // 2 and os.environ.get("GPUPROF_WINDOW_S"):
        out["usr1_allocated"] = torch.cuda.memory_allocated()
        os.kill(os.getpid(), signal.SIGUSR1)
    time.sleep(pause)
torch.cuda.synchronize()
out["max_allocated_last"] = torch.cuda.max_memory_allocated()
out["max_reserved_last"] = torch.cuda.max_memory_reserved()
out["allocated_end"] = torch.cuda.memory_allocated()
with open(result, "w") as f:
    json.dump(out, f)
if oom:
    free, total = torch.cuda.mem_get_info()
    torch.empty(total, dtype=torch.uint8, device=dev)
