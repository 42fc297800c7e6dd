"""Real models no one here wrote, with random weights, for the PyTorch GPU
tests and the overhead benchmark.

  train_models.py --model gpt2|resnet50 [--steps N] [--warmup W] [--count-kernels]
                  [--threads] [--pipelined] [--torch-profiler JSON]
                  [--memory-history]

gpt2: transformers GPT2LMHeadModel, 12 layers x 768, batch 8 x 1024, bf16
autocast, AdamW. resnet50: torchvision, batch 64 x 3 x 224 x 224, SGD.
Prints one line:
  GPUPROF_TORCH model=.. steps=.. median_ms=.. enqueue_ms=.. cpu_ms=..
    fwd_ms=.. bwd_ms=.. opt_ms=.. max_allocated=.. max_reserved=..
    backend=.. [torch_profiler_bytes=..] [memory_history_bytes=..]
    [kernels_per_step=a,b,c]
(enqueue_ms: host time until the step is queued, before the sync; cpu_ms:
the main thread's CPU time until then; fwd_ms, bwd_ms, opt_ms: host time to
queue the forward, the backward and the optimizer step; all medians.)
--count-kernels runs torch.profiler over the timed steps to count the GPU
kernels of each (it cannot run under gpuprof: one CUPTI user per process).
--pipelined times the steps without waiting for each: as in a training loop
that never reads a value back, the host queues the next step while the GPU
runs this one; a step's time is then the GPU timeline's between the starts
of consecutive steps (CUDA events), and a host slower than the GPU shows in
it only when it falls behind. By default each step ends with a
synchronize (as a loop calling loss.item() each step does), so all host
time before the GPU gets going counts.
--torch-profiler JSON times the steps inside torch.profiler.profile (CPU and
CUDA activities, profile_memory=True), the reference the overhead budget
names, and writes its Chrome trace to JSON after the timed steps (the
export is not timed); the line then also says torch_profiler_bytes=.
--memory-history records PyTorch's own memory history
(torch.cuda.memory._record_memory_history(enabled="all", context="all",
stacks="python"), what memory_viz shows) from after the model is built,
over the warmup and the timed steps: the budget's other reference. After
the timed steps (not timed) its snapshot is pickled as memory_viz reads it
to a temporary file, deleted at once; the line then also says
memory_history_bytes=, that file's size.
--threads adds a line on what each of the process's threads did over the
timed steps (Linux /proc), to see what runs beside the training thread:
  GPUPROF_THREADS main=CPU_MS/IVCS@CPU other=NAME:CPU_MS/IVCS@CPU,...
(others: the 8 busiest, busiest first; CPU_MS: CPU ms per step; IVCS:
involuntary context switches per step, the thread preempted; CPU: the
processor it last ran on.)
With GPUPROF_PERF_CTL naming perf record's --control fifo, the timed steps
alone are profiled: "enable" is written to it before them, "disable" after.
"""
import argparse
import os
import pickle
import re
import statistics
import tempfile
import time

import torch


def build(name, marks=None):
    """The model's training step; with a list `marks`, each step clears it
    and appends the host time (time.perf_counter) when its forward and its
    backward were queued."""
    note = marks.append if marks is not None else (lambda t: None)
    clock = time.perf_counter
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
        model = GPT2LMHeadModel(cfg).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x = torch.randint(0, cfg.vocab_size, (8, 1024), device="cuda")

        def step():
            if marks is not None:
                marks.clear()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=x, labels=x).loss
            note(clock())
            loss.backward()
            note(clock())
            opt.step()
            opt.zero_grad(set_to_none=True)

        return step
    if name == "resnet50":
        import torchvision

        model = torchvision.models.resnet50().cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = torch.randn(64, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (64,), device="cuda")
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            if marks is not None:
                marks.clear()
            loss = loss_fn(model(x), y)
            note(clock())
            loss.backward()
            note(clock())
            opt.step()
            opt.zero_grad(set_to_none=True)

        return step
    raise SystemExit("unknown model " + name)


def history_bytes():
    """Stops PyTorch's memory history (--memory-history) and returns the size
    of its snapshot pickled as memory_viz reads it: what recording cost on
    disk. The file is anonymous, gone when closed."""
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    with tempfile.TemporaryFile() as f:
        pickle.dump(snap, f)
        return f.tell()


def phase_ms(marks, t0, queued_ms):
    """Host ms to queue a step's forward, backward and optimizer step, from
    build()'s marks of a step that began at t0 and was queued in queued_ms;
    None without both marks."""
    if len(marks) != 2:
        return None
    fwd_end, bwd_end = marks
    return ((fwd_end - t0) * 1000.0, (bwd_end - fwd_end) * 1000.0,
            t0 * 1000.0 + queued_ms - bwd_end * 1000.0)


def timed_step(step, start=None):
    """Runs one step; (ms until the GPU finished it, ms until the host had
    queued it, ms of this thread's CPU time until then). The CPU time stops
    before the sync, where the thread spins. With a CUDA event `start`, it is
    recorded as the step begins and the step is not waited for: the first
    is None (--pipelined)."""
    c0 = time.thread_time()
    t0 = time.perf_counter()
    if start is not None:
        start.record()
    step()
    t1 = time.perf_counter()
    c1 = time.thread_time()
    queued, on_cpu = (t1 - t0) * 1000.0, (c1 - c0) * 1000.0
    if start is not None:
        return None, queued, on_cpu
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1000.0, queued, on_cpu


def thread_stats():
    """{tid: (name, cpu_ms, involuntary switches, last processor)} of this
    process's threads, from /proc/self/task."""
    hz = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/self/task/{tid}/status") as f:
                status = f.read()
        except OSError:
            continue  # the thread ended meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()  # fields[0] is stat's 3rd
        ivcs = int(re.search(r"nonvoluntary_ctxt_switches:\s*(\d+)", status).group(1))
        out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) * 1000.0 / hz, ivcs,
                         int(fields[36]))
    return out


def threads_line(before, after, steps):
    """One GPUPROF_THREADS line: each thread's CPU ms and involuntary context
    switches per step between two thread_stats(), and where it last ran."""
    main_tid = os.getpid()
    rows = []
    for tid, (name, cpu, ivcs, where) in after.items():
        _, cpu0, ivcs0, _ = before.get(tid, (name, 0.0, 0, where))
        rows.append((tid == main_tid, (cpu - cpu0) / steps, (ivcs - ivcs0) / steps, name, where))
    fmt = lambda r: "%.1f/%.1f@%d" % (r[1], r[2], r[4])
    main = [r for r in rows if r[0]]
    others = sorted((r for r in rows if not r[0] and r[1] > 0), key=lambda r: -r[1])[:8]
    return ("GPUPROF_THREADS main=" + (fmt(main[0]) if main else "?") + " other=" +
            ",".join(r[3].replace(" ", "_").replace(",", "_") + ":" + fmt(r) for r in others))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--count-kernels", action="store_true")
    ap.add_argument("--threads", action="store_true")
    ap.add_argument("--pipelined", action="store_true")
    ap.add_argument("--torch-profiler", metavar="JSON")
    ap.add_argument("--memory-history", action="store_true")
    args = ap.parse_args()
    if args.count_kernels and args.torch_profiler:
        ap.error("--count-kernels already runs torch.profiler: not with --torch-profiler")
    torch.manual_seed(0)
    marks = []
    step = build(args.model, marks)
    if args.memory_history:  # after build(): the model's own blocks are not in it
        torch.cuda.memory._record_memory_history(enabled="all", context="all",
                                                 stacks="python")
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    kernels = []
    times = []
    enqueue = []  # host time until the step is queued (before the sync)
    cpu = []  # CPU time of this thread per step
    phases = ([], [], [])  # host ms to queue forward, backward, optimizer step
    if args.count_kernels:
        from torch.autograd import DeviceType

        for _ in range(args.steps):
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                step()
                torch.cuda.synchronize()
            n = sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA
                    and not e.name.startswith(("Memcpy", "Memset")))
            kernels.append(n)
    else:
        before = thread_stats() if args.threads else None
        perf_ctl = os.environ.get("GPUPROF_PERF_CTL")
        if perf_ctl:
            perf_ctl = open(perf_ctl, "w", buffering=1)
            perf_ctl.write("enable\n")
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
        prof = None
        if args.torch_profiler:
            acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            prof = torch.profiler.profile(activities=acts, profile_memory=True)
            prof.__enter__()
        for i in range(args.steps):
            t0 = time.perf_counter()
            total, queued, on_cpu = timed_step(step, starts[i] if args.pipelined else None)
            if total is not None:
                times.append(total)
            split = phase_ms(marks, t0, queued)
            for into, ms in zip(phases, split or ()):
                into.append(ms)
            enqueue.append(queued)
            cpu.append(on_cpu)
        if args.pipelined:
            starts[-1].record()
            torch.cuda.synchronize()
            times = [starts[i].elapsed_time(starts[i + 1]) for i in range(args.steps)]
        if prof is not None:
            torch.cuda.synchronize()
            prof.__exit__(None, None, None)
            prof.export_chrome_trace(args.torch_profiler)
            prof_bytes = os.path.getsize(args.torch_profiler)
        if perf_ctl:
            perf_ctl.write("disable\n")
            perf_ctl.close()
        if before is not None:
            print(threads_line(before, thread_stats(), args.steps), flush=True)
    hist_bytes = history_bytes() if args.memory_history else None
    backend = torch.cuda.memory.get_allocator_backend()
    line = (f"GPUPROF_TORCH model={args.model} steps={args.steps} "
            f"median_ms={statistics.median(times) if times else 0:.3f} "
            f"enqueue_ms={statistics.median(enqueue) if enqueue else 0:.3f} "
            f"cpu_ms={statistics.median(cpu) if cpu else 0:.3f} "
            + "".join(f"{k}={statistics.median(v) if v else 0:.3f} "
                      for k, v in zip(("fwd_ms", "bwd_ms", "opt_ms"), phases)) +
            f"max_allocated={torch.cuda.max_memory_allocated()} "
            f"max_reserved={torch.cuda.max_memory_reserved()} "
            f"max_requested={torch.cuda.memory_stats().get('requested_bytes.all.peak', -1)} "
            f"backend={backend}")
    if args.torch_profiler:  # never with --count-kernels (refused above)
        line += f" torch_profiler_bytes={prof_bytes}"
    if hist_bytes is not None:
        line += f" memory_history_bytes={hist_bytes}"
    if kernels:
        line += " kernels_per_step=" + ",".join(map(str, kernels))
    print(line, flush=True)


if __name__ == "__main__":
    main()
