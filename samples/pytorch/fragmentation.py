#!/usr/bin/env python3
"""Fragmentation of PyTorch's caching allocator: reserved >> allocated.

The story
    Each round allocates a large temporary a little larger than the last one
    (256 MiB, 264 MiB, 272 MiB, ..., like activations of a growing sequence
    length or batch), keeps a small 12 MiB result, and frees the large one.
    Live memory stays small: the current large tensor plus the small
    results (~0.7 GiB at the end). But with the default caching allocator
    each large tensor gets its own segment (cudaMalloc), and when it is
    freed the segment stays cached; the next, larger request fits in none
    of the cached blocks (each is 8 MiB too small, and blocks of different
    segments cannot be merged), so a new segment is allocated every round.
    The small results are carved out of the first freed segment and pin it.
    Reserved memory grows to the sum of all rounds' sizes (~8.2 GiB for 24
    rounds) while allocated stays under 0.75 GiB: a ~7.9 GiB gap of cached,
    unusable memory. On a full GPU this is the "reserved but unallocated"
    memory of an OOM message, and the allocator then frees its cache and
    retries (num_alloc_retries > 0, a slow cudaFree + synchronize); here
    the GPU has room, so there are no retries (num_alloc_retries=0).

    With `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` the allocator
    maps memory into one growing virtual segment per stream (in pages of
    20 MiB for large tensors): a free block at the end of the segment is
    extended by mapping a page or two more instead of allocating a new
    segment, so reserved stays near what is live (~0.7-1.2 GiB).

    python3 fragmentation.py --variant default      # max reserved ~8.2 GiB
    python3 fragmentation.py --variant expandable   # max reserved ~1 GiB

    The expandable variant sets expandable_segments:True itself, BEFORE
    importing torch (the allocator reads its configuration once), by
    appending it to PYTORCH_ALLOC_CONF if that is set, otherwise to
    PYTORCH_CUDA_ALLOC_CONF (keeping what the user set there).

What gpuprof shows
    Run it with `gpuprof --trace --mode native`: native mode keeps PyTorch's
    caching allocator and records its segments. (The default tensor mode
    switches the allocator to cudaMallocAsync, which has no such caching
    segments, and ignores expandable_segments: the story disappears.)
    default: one `cudaMalloc` per round, 256 MiB + 8 MiB x round, none freed:
    the device memory (reserved) counter climbs to ~8.2 GiB, each segment
    allocated by the round's first allocation.
    expandable: no `cudaMalloc` per round; `cuMemCreate` + `cuMemMap` API
    calls of a 20 MiB page every round or two instead (the virtual segment
    grows): reserved ~1 GiB. (Whether the VMM pages also appear as `alloc`
    events depends on what CUPTI reports for them.)

The fix
    `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (in the environment
    before the program starts, or before torch is imported); or avoid
    changing sizes (pad to a few fixed bucket sizes); `torch.cuda.empty_cache()`
    returns fully free segments to CUDA (not the pinned ones).

Prints `GPUPROF_TORCH_EXPECT ...`: max_allocated, max_reserved,
end_allocated, num_alloc_retries, worst_gap (the largest reserved - allocated
seen, sampled after every allocation and free), worst_gap_step,
step_reserved/step_allocated (after each round), reserved_after_empty_cache,
expandable (1 if PyTorch reports expandable segments), alloc_conf.
"""
import argparse
import os
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["default", "expandable"], default="default")
    ap.add_argument("--steps", type=int, default=24, help="rounds")
    ap.add_argument("--base-mib", type=int, default=256, help="first large tensor")
    ap.add_argument("--grow-mib", type=int, default=8, help="growth per round")
    ap.add_argument("--small-mib", type=int, default=12, help="small tensor kept per round")
    ap.add_argument("--device", default="cuda")
    return ap.parse_args()


args = parse_args()
# Must happen before `import torch`: the allocator reads its settings once.
if args.variant == "expandable":
    VAR = "PYTORCH_ALLOC_CONF" if os.environ.get("PYTORCH_ALLOC_CONF") else "PYTORCH_CUDA_ALLOC_CONF"
    old = os.environ.get(VAR, "").strip().strip(",")
    os.environ[VAR] = (old + "," if old else "") + "expandable_segments:True"

import torch  # noqa: E402  (after the environment is set)
from story import MiB, cuda_device, report


def expandable_in_use():
    try:
        return any(seg.get("is_expandable", False) for seg in torch.cuda.memory_snapshot())
    except Exception:
        return False


def main():
    dev = cuda_device(args.device)
    conf = os.environ.get("PYTORCH_ALLOC_CONF") or os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or ""
    backend = torch.cuda.get_allocator_backend()
    if backend != "native":
        print("note: allocator backend is %s, not PyTorch's caching allocator: this story needs "
              "the native one (under gpuprof: --mode native)" % backend, file=sys.stderr)

    worst = (0, -1)

    def sample(step):
        nonlocal worst
        gap = torch.cuda.memory_reserved(dev) - torch.cuda.memory_allocated(dev)
        if gap > worst[0]:
            worst = (gap, step)

    kept = []
    step_reserved = []
    step_alloc = []
    for i in range(args.steps):
        size = (args.base_mib + i * args.grow_mib) * MiB
        big = torch.empty(size // 4, device=dev)  # float32
        big.fill_(float(i))  # use it, like an activation
        small = torch.empty(args.small_mib * MiB // 4, device=dev)
        small.fill_(big[0].item())  # a small result kept from this round
        kept.append(small)
        sample(i)
        del big  # the large temporary is freed ...
        sample(i)
        step_reserved.append(torch.cuda.memory_reserved(dev))
        step_alloc.append(torch.cuda.memory_allocated(dev))
        # ... and the next round asks for a slightly larger one

    expandable = expandable_in_use()
    retries = torch.cuda.memory_stats(dev).get("num_alloc_retries", 0)
    max_alloc = torch.cuda.max_memory_allocated(dev)
    max_res = torch.cuda.max_memory_reserved(dev)
    torch.cuda.empty_cache()
    after_empty = torch.cuda.memory_reserved(dev)
    checksum = sum(int(t[0].item()) for t in kept)
    print("%s: max allocated %.0f MiB, max reserved %.0f MiB, worst reserved-allocated gap "
          "%.0f MiB (round %d), alloc retries %d, reserved after empty_cache %.0f MiB" % (
              args.variant, max_alloc / MiB, max_res / MiB, worst[0] / MiB, worst[1], retries,
              after_empty / MiB))
    report(dev, "fragmentation", args.variant, max_allocated=max_alloc, max_reserved=max_res,
           steps=args.steps, num_alloc_retries=retries, worst_gap=worst[0],
           worst_gap_step=worst[1], step_reserved=step_reserved, step_allocated=step_alloc,
           reserved_after_empty_cache=after_empty, expandable=expandable,
           alloc_conf=conf or "-", checksum=checksum)


if __name__ == "__main__":
    main()
