"""A PyTorch program with a known diagnosis that samples/pytorch/ has not:
a failed cudaMalloc of PyTorch's caching allocator (native mode) that it
answers by releasing its cached segments and retrying, the fragmentation
`gpuprof analyze` can see without knowing what is allocated inside the
segments. Prints what the report must say:

  GPUPROF_EXPECT scenario=frag request=... cached=... ...

  scenarios.py frag
"""
import sys

import torch

MiB, GiB = 1 << 20, 1 << 30


def expect(**kv):
    print("GPUPROF_EXPECT " + " ".join("%s=%s" % kv_ for kv_ in kv.items()), flush=True)


def frag():
    """1 GiB blocks fill the device; every other one is freed (PyTorch keeps
    it cached); a 2 GiB request fits none of them and the device has less
    than that left: cudaMalloc fails, PyTorch releases its cache, retries."""
    free, _ = torch.cuda.mem_get_info()
    n = int(free // GiB) - 1
    blocks = [torch.empty(GiB, dtype=torch.uint8, device="cuda") for _ in range(n)]
    kept = blocks[1::2]
    released = len(blocks[0::2]) * GiB
    del blocks
    free_now, _ = torch.cuda.mem_get_info()
    big = torch.empty(2 * GiB, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    expect(scenario="frag", request=2 * GiB, cached=released, free_before=free_now,
           kept=len(kept), ok=int(big.numel() == 2 * GiB))


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    if not torch.cuda.is_available():
        print("GPUPROF_EXPECT scenario=none no_gpu=1")
        return 77
    what = args[0]
    if what == "frag":
        frag()
    else:
        raise SystemExit("unknown scenario " + what)
    return 0


if __name__ == "__main__":
    sys.exit(main())
