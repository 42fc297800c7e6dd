"""GPT-2 small (tests/torch/train_models.py's: batch 8x1024, bf16, AdamW)
trained for the flight recorder's measurements, writing what the program
itself measured to RESULT as JSON:

  flight_gpt2.py RESULT [--steps N | --seconds S] [--range A-B]
                 [--profile P-Q] [--usr1 N] [--oom-at N] [--grow-at N]

--range A-B    torch.cuda.reset_peak_memory_stats() before step A, and
               max_memory_allocated() after step B: what a --dump-steps A-B
               dump's peak must equal (range_max)
--profile P-Q  torch.cuda.profiler.start() before step P, stop() after step
               Q; the same measure (profile_max)
--usr1 N       SIGUSR1 to itself after step N (a dump while it goes on);
               each step's time is kept (step_ms), and the signal's step
--oom-at N     at step N a request of the device's whole memory, caught:
               when it failed (oom_unix), then the dump's appearance is
               waited for (DUMP_GLOB: a glob of the dumps' paths): when it
               was whole (a gzip stream that ends; oom_dump_s)
--grow-at N    from step N the batch is 8 times larger (a batch that
               suddenly grows), until it runs out of memory (not caught)
--rank-only R  under torchrun (RANK, LOCAL_RANK: a GPU a rank; RESULT.rankR):
               --oom-at and --grow-at on rank R only
TRACE_PATH (a glob): the trace's file, whose size before the end is kept.
"""
import argparse
import glob
import json
import os
import signal
import sys
import time
import zlib

import torch



def pair(s):
    a, _, b = s.partition("-")
    return int(a), int(b or a)


class GzipWatch:
    """Whether a file being written is one whole gzip stream yet: each look
    inflates only what was added since the last, so that looking every 10 ms
    at a dump of tens of MB does not itself take seconds."""

    def __init__(self, path):
        self.path, self.at, self.d, self.failed = path, 0, zlib.decompressobj(16 + zlib.MAX_WBITS), False

    def whole(self):
        if self.failed:
            return False
        try:
            with open(self.path, "rb") as f:
                f.seek(self.at)
                data = f.read()
            self.at += len(data)
            self.d.decompress(data)
            return self.d.eof
        except (OSError, zlib.error):
            self.failed = True
            return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--range", type=pair)
    ap.add_argument("--profile", type=pair)
    ap.add_argument("--usr1", type=int)
    ap.add_argument("--oom-at", type=int)
    ap.add_argument("--grow-at", type=int)
    ap.add_argument("--rank-only", type=int, help="--oom-at and --grow-at on this RANK only")
    a = ap.parse_args()
    rank = int(os.environ.get("RANK", "0"))
    if a.rank_only is not None and rank != a.rank_only:
        a.oom_at = a.grow_at = None
    if "LOCAL_RANK" in os.environ:  # torchrun: a GPU a rank
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        a.result = "%s.rank%d" % (a.result, rank)
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (8, 1024), device="cuda")
    out = {"step_ms": [], "steps": 0}
    t_start = time.time()
    n = 0
    while True:
        n += 1
        if a.seconds is None and n > a.steps:
            break
        if a.seconds is not None and time.time() - t_start > a.seconds:
            break
        if a.range and n == a.range[0]:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        if a.profile and n == a.profile[0]:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            torch.cuda.profiler.start()
        if a.grow_at and n == a.grow_at:
            x = torch.randint(0, cfg.vocab_size, (64, 1024), device="cuda")
            out["grew_at"] = n
            with open(a.result, "w") as f:  # what is known before it dies
                json.dump(out, f)
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        out["step_ms"].append((time.perf_counter() - t0) * 1000)
        out["steps"] = n
        if a.range and n == a.range[1]:
            out["range_max"] = torch.cuda.max_memory_allocated()
        if a.profile and n == a.profile[1]:
            torch.cuda.profiler.stop()
            out["profile_max"] = torch.cuda.max_memory_allocated()
        if a.usr1 and n == a.usr1:
            out["usr1_step"] = n
            os.kill(os.getpid(), signal.SIGUSR1)
        if a.oom_at and n == a.oom_at:
            free, total = torch.cuda.mem_get_info()
            before = set(glob.glob(os.environ.get("DUMP_GLOB", "/nonexistent")))
            try:
                torch.empty(total, dtype=torch.uint8, device="cuda")
            except torch.OutOfMemoryError:
                out["oom_unix"] = time.time()
            deadline = time.time() + 30
            watch = {}
            while time.time() < deadline:
                new = [p for p in glob.glob(os.environ.get("DUMP_GLOB", "/nonexistent")) if p not in before]
                for p in new:
                    watch.setdefault(p, GzipWatch(p))
                if new and all(watch[p].whole() for p in new):
                    out["oom_dump_s"] = time.time() - out["oom_unix"]
                    out["oom_dump"] = new
                    break
                time.sleep(0.01)
    out["max_allocated"] = torch.cuda.max_memory_allocated()
    out["seconds"] = time.time() - t_start
    # what the trace's file holds before the end writes the window: the
    # outline streamed so far (TRACE_PATH: the file)
    if os.environ.get("TRACE_PATH"):
        out["trace_bytes_before_end"] = sum(os.path.getsize(p) for p in glob.glob(os.environ["TRACE_PATH"]))
    with open("/proc/self/status") as f:
        out["vm_hwm_kb"] = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    with open(a.result, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
