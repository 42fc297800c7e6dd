"""A training loop that uses what real jobs use, for the PyTorch GPU tests:
DataLoader workers (--workers N, --start fork|spawn), AMP autocast,
activation checkpointing, and optionally torch.compile (--compile).
Prints: GPUPROF_FEATURES steps=N workers=N start=.. compile=.. ok=1
The trace must name its modules (fwd:/bwd:), number its steps, and in
--compile mode say what naming survives (checked by check_features.py)."""
import argparse

import torch
import torch.utils.checkpoint as ckpt


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.ff = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(self.ln(x))


class Net(torch.nn.Module):
    def __init__(self, d=512, n=6, checkpointed=True):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))
        self.head = torch.nn.Linear(d, 10)
        self.checkpointed = checkpointed

    def forward(self, x):
        for i, b in enumerate(self.blocks):
            if self.checkpointed and i % 2 == 0:
                x = ckpt.checkpoint(b, x, use_reentrant=False)
            else:
                x = b(x)
        return self.head(x.mean(1))


class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(128, 512, generator=g), i % 10


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--start", default="fork", choices=["fork", "spawn"])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=6)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = Net().cuda()
    if a.compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    dl = torch.utils.data.DataLoader(Data(), batch_size=8, num_workers=a.workers,
                                     multiprocessing_context=a.start if a.workers else None)
    steps = 0
    while steps < a.steps:
        for x, y in dl:
            x, y = x.cuda(non_blocking=True), y.cuda()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            steps += 1
            if steps == a.steps:
                break
    torch.cuda.synchronize()
    print("GPUPROF_FEATURES steps=%d workers=%d start=%s compile=%d ok=1" % (
        steps, a.workers, a.start, int(a.compile)), flush=True)


if __name__ == "__main__":
    main()
