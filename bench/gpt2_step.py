"""GPT-2 small training step, for timing gpuprof's overhead.

Model: transformers GPT2LMHeadModel with random weights (12 layers, 768 wide,
12 heads), batch 8 x 1024 tokens, bf16 autocast, AdamW. Prints one line:
  GPUPROF_BENCH label=<label> steps=N median_ms=M p10_ms=.. p90_ms=.. peak_alloc=B
Run it plain and under `gpuprof --trace` in the same session to compare.
"""
import argparse
import resource
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--label", default="plain")
    args = ap.parse_args()

    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (args.batch, args.seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1000.0)
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    print(
        f"GPUPROF_BENCH label={args.label} steps={args.steps} "
        f"median_ms={statistics.median(times):.3f} p10_ms={q(0.1):.3f} p90_ms={q(0.9):.3f} "
        f"peak_alloc={torch.cuda.max_memory_allocated()} "
        f"maxrss_mb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
