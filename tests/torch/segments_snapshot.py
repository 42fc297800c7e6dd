#!/usr/bin/env python3
"""Run under gpuprof --trace (tests/torch/check_segments.py): a small
transformer trained a few steps at batches that change, keeping a survivor
of an odd size each step (so PyTorch's cache holds segments with blocks
and free stretches in them), then PyTorch's own view of its segments and
their blocks (torch.cuda.memory._snapshot()) written to OUT, and right
after it a marker block of a size nothing else asks for: in the trace,
what was live just before the marker is what the snapshot shows.

usage: segments_snapshot.py OUT.json"""
import json
import sys

import torch

MARK_BYTES = 7 * 2**20 + 1536  # a multiple of 512: PyTorch's block is this size

dev = torch.device("cuda", torch.cuda.current_device())
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).to(dev)
opt = torch.optim.AdamW(model.parameters())
keep = []
for step in range(4):
    x = torch.randn(8 + 6 * step, 256, 512, device=dev)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    keep.append(torch.empty((step + 1) * 3 * 2**20 + 4096 * step, dtype=torch.uint8, device=dev))
    del x, loss
torch.cuda.synchronize()
snap = torch.cuda.memory._snapshot()
reserved = torch.cuda.memory_reserved(dev)
marker = torch.empty(MARK_BYTES, dtype=torch.uint8, device=dev)
torch.cuda.synchronize()
segments = [{"address": s["address"], "total_size": s["total_size"], "allocated_size": s["allocated_size"],
             "is_expandable": s.get("is_expandable"), "stream": s.get("stream"),
             "blocks": [[b.get("address"), b["size"], b["state"]] for b in s["blocks"]]}
            for s in snap["segments"] if s["device"] == dev.index]
with open(sys.argv[1], "w") as f:
    json.dump({"mark_bytes": MARK_BYTES, "segments": segments,
               "reserved": reserved}, f)
print("SNAPSHOT segments=%d reserved=%d" % (len(segments), sum(s["total_size"] for s in segments)), flush=True)
