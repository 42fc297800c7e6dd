"""GPT-2 trained with activation checkpointing, for the GPU suite's
native-mode checks (check_native.py): each block's activations are dropped
after its forward and made again by a second forward of the block inside
the backward, so much of what the backward holds was made by forwards.

  checkpointed.py [--steps N] [--batch B] [--seq S] [--layers L]

transformers' GPT2LMHeadModel from its config (L layers, default 12, x 768,
random weights, no cache) with gradient_checkpointing_enable(use_reentrant
False: torch.utils.checkpoint's non-reentrant form), AdamW, bf16 autocast,
batch B x S tokens (default 8 x 1024), a hand-written loop of N steps
(default 4), seed 0. Prints one line:
  GPUPROF_TORCH model=gpt2-checkpointed steps=N max_allocated=.. max_reserved=.. backend=..
(torch.cuda.max_memory_allocated(), max_memory_reserved(), the allocator
backend)."""
import argparse
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=12)
    args = ap.parse_args()
    if min(args.steps, args.batch, args.seq, args.layers) < 1:
        ap.error("--steps, --batch, --seq and --layers must be at least 1")
    if not torch.cuda.is_available():
        sys.exit("checkpointed.py needs a CUDA device")
    torch.manual_seed(0)

    cfg = GPT2Config(n_layer=args.layers, n_embd=768, n_head=12,
                     n_positions=max(1024, args.seq), vocab_size=50257, use_cache=False)
    model = GPT2LMHeadModel(cfg).cuda()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()  # transformers checkpoints only in training mode
    if not model.is_gradient_checkpointing:
        sys.exit("gradient checkpointing did not turn on")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (args.batch, args.seq), device="cuda")

    for _ in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    print("last loss %.4f" % loss.item(), flush=True)
    print(f"GPUPROF_TORCH model=gpt2-checkpointed steps={args.steps} "
          f"max_allocated={torch.cuda.max_memory_allocated()} "
          f"max_reserved={torch.cuda.max_memory_reserved()} "
          f"backend={torch.cuda.memory.get_allocator_backend()}", flush=True)


if __name__ == "__main__":
    main()
