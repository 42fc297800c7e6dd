"""Synthetic traces for the tests of `gpuprof report` (test_report.py) and
its benchmark (bench/report_budget.py), made with tests/analyze/synth.py
as test_analyze.py makes its own (exporters/TRACE_FORMAT.md is the format).

  make_traces.py KIND OUTDIR [N]

KIND:
  train     tensor mode: a training loop of 20 steps, layers nested three
            deep (fwd:<Net> > blocks.1 > blocks.1.mlp), the phases
            zero_grad, forward, backward, optimizer.step, and a slow leak
            (1 MiB a step kept in <Net>.blocks.1.mlp)
  wide      train with a larger layer (blocks.1.mlp's activation 96 MiB
            instead of 32): the other run of --base
  flight    train as a flight recorder's trace: an outline event a step,
            its window of full events from step 10
  oom       tensor mode: the loop dies in step 3, in <Net>.head, asking
            for more than the device has left (cut short, as a killed
            program leaves it)
  cuda      a CUDA program without PyTorch: nested NVTX ranges, no steps
  trials    native mode with the allocator hook: a convolutional batch search
            (synth.conv_doubling): cuDNN's workspace trials that PyTorch
            raises and the convolution catches, an allocator retry, then the
            fatal request in step 3's backward
  hostile   a CUDA program whose command line, NVTX ranges (the layers)
            and failed allocation's range carry markup, quotes, entities,
            U+2028, control characters (ESC, BEL), a C1 CSI (U+009B) and
            a bidi override (U+202E): HOSTILE_NAMES; and, in the same run,
            a PyTorch program with modules so named
            (OUTDIR/hostile.torch.json.gz)
  large     N events (default 10,000,000) of a tensor-mode training loop,
            written directly as a gzip stream (synth.Sim keeps every event
            in memory, sorts and shuffles: too slow for millions)

Writes OUTDIR/KIND.json.gz (large: OUTDIR/large.N.json.gz) and prints its
path (one a line). Everything is deterministic: the same bytes each time."""
import json
import os
import re
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "analyze"))
sys.path.insert(0, os.path.join(ROOT, "exporters"))
import synth  # noqa: E402
from synth import AUTOGRAD, GiB, KiB, MAIN, MiB  # noqa: E402
from trace_format import CAT, EV, F, KIND, T  # noqa: E402  (the names of the trace)

# Names that would act if a page wrote them as HTML, or that could mislead
# a reader (a bidi override turns the text after it around). The page must
# show each as text.
HOSTILE_SCRIPT = "</script><script>document.title='PWNED'</script>"
HOSTILE_IMG = "<img src=x onerror=\"document.title='PWNED'\">"
HOSTILE_QUOTES = "q\"uo'te &lt; <!-- not a comment"
HOSTILE_LINESEP = "line\u2028sep"
HOSTILE_CONTROL = "ctl\x1b[2J\x07bel\u009b31m\u202eevil"
HOSTILE_NAMES = [HOSTILE_SCRIPT, HOSTILE_IMG, HOSTILE_QUOTES, HOSTILE_LINESEP, HOSTILE_CONTROL]
HOSTILE_CMDLINE = "./app --name \"%s\" %s \u202e\x07" % (HOSTILE_SCRIPT, HOSTILE_IMG)
# a PyTorch process of the same run: modules so named (no dots: a module
# path is split at them)
HOSTILE_MODULES = ["<img src=x onerror=\"document['title']='PWNED'\">",
                   "</script><script>document['title']='PWNED'</script>\u202e"]

# ---- a training loop with nested layers ----

# (path under <Net>, activation bytes, parameter bytes); blocks.N are
# containers whose children do the work
LAYERS = [("embed", 16 * MiB, 32 * MiB),
          ("blocks.0.attn", 24 * MiB, 16 * MiB), ("blocks.0.mlp", 32 * MiB, 32 * MiB),
          ("blocks.1.attn", 24 * MiB, 16 * MiB), ("blocks.1.mlp", 32 * MiB, 32 * MiB),
          ("head", 48 * MiB, 64 * MiB)]


def train_loop(sim, steps=20, leak=1 * MiB, wide=None, oom_at=None, oom_request=0, oom_in="head",
               step_gap=40000.0):
    """wide: {path: activation bytes} instead of LAYERS'. oom_at: the step
    whose forward fails in oom_in, asking for oom_request bytes (the loop
    ends there)."""
    wide = wide or {}
    sim.torch_info()
    params = {path: sim.alloc(p, "parameters") for path, _, p in LAYERS}
    sim.alloc(8 * MiB, "other", async_=False, api="cudaMalloc", fw=False)  # cuBLAS's workspace
    grads, state, kept = {}, [], []
    x = None
    sim.tick(1000)
    for step in range(1, steps + 1):
        sim.tick(step_gap)
        if x is not None:
            sim.free(x)
        x = sim.alloc(8 * MiB, "inputs")
        sim.push("phase:zero_grad")
        for a in grads.values():
            sim.free(a)
        grads = {}
        sim.pop()
        # forward: fwd:<Net> > fwd:blocks.N > fwd:blocks.N.attn
        acts = []
        sim.push("fwd:<Net>")
        block = None
        for path, act, _ in LAYERS:
            parent = path.rsplit(".", 1)[0] if "." in path else None
            if parent != block:
                if block:
                    sim.pop()
                if parent:
                    sim.push("fwd:" + parent)
                block = parent
            sim.push("fwd:" + path)
            if oom_at == step and path == oom_in:
                sim.oom(oom_request)
                return sim
            tmp = sim.alloc(4 * MiB, "temporaries")
            acts.append((path, sim.alloc(wide.get(path, act), "activations")))
            sim.free(tmp)
            if leak and path == "blocks.1.mlp":
                kept.append(sim.alloc(leak, "activations"))
            sim.tick(200)
            sim.pop()
        if block:
            sim.pop()
        sim.pop()
        loss = sim.alloc(512, "activations")
        # backward on the autograd thread, the modules' ranges as start/end
        sim.push("phase:backward")
        for path, a in reversed(acts):
            sim.bwd_start(path)
            if path not in grads:
                grads[path] = sim.alloc(dict((p, s) for p, _, s in LAYERS)[path], "gradients", tid=AUTOGRAD)
            t = sim.alloc(2 * MiB, "temporaries", tid=AUTOGRAD)
            sim.free(a, tid=AUTOGRAD)
            sim.free(t, tid=AUTOGRAD)
            sim.tick(150)
        sim.bwd_end(AUTOGRAD)
        sim.free(loss)
        sim.pop()
        # optimizer: AdamW's two states per parameter, made in step 1
        sim.push("phase:optimizer.step")
        if step == 1:
            for path, _, p in LAYERS:
                state.append(sim.alloc(p, "optimizer state"))
                state.append(sim.alloc(p, "optimizer state"))
        t = sim.alloc(16 * MiB, "temporaries")
        sim.tick(300)
        sim.free(t)
        sim.pop()
        sim.mark("step:%d" % step)
    return sim


def make_train(path, wide=None):
    sim = synth.Sim(total=16 * GiB, cmdline="python3 train.py --steps 20")
    train_loop(sim, wide=wide)
    sim.write(path)


def make_flight(path):
    """train as a flight recorder's trace lays it out: the meta, then an
    outline event a step (its peak a little above what was live at its
    mark), then the events, the window of full events from step 10 on."""
    sim = synth.Sim(total=16 * GiB, cmdline="python3 train.py --steps 20")
    train_loop(sim)
    sim.write(path)
    outline, begin = [], 0.0
    for pt in sim.series:
        us, peak = pt["t"], pt["live"] + 64 * MiB
        outline.append(json.dumps({
            T.PH: "i", T.NAME: EV.OUTLINE.name, T.CAT: CAT.GPUPROF, T.PID: sim.pid, T.TID: 0, T.TS: sim.rel(us), T.S: "g",
            T.ARGS: {F.DEVICE: 0, F.STEP: pt["step"], F.CLOSED_BY: "step", F.BEGIN_NS: int(begin * 1000),
                     F.ALLOCATED_PEAK: peak, F.PEAK_NS: int(us * 1000), F.RESERVED_PEAK: 0,
                     F.DEVICE_PEAK: pt["total"] + 64 * MiB, F.ALLOCATED: pt["live"], F.RESERVED: 0,
                     F.DEVICE_BYTES: pt["total"], F.LIVE: 1, F.OOMS: 0, F.OOM_BYTES: 0,
                     F.BY_CATEGORY: {"activations": peak}, F.BY_LAYER: {"<Net>.blocks.1.mlp": peak},
                     F.DROPPED_SEGMENTS: 0, F.DROPPED_BYTES: 0}}, separators=(",", ":")))
        begin = us
    window = json.dumps({T.PH: "i", T.NAME: EV.WINDOW.name, T.CAT: CAT.GPUPROF, T.PID: sim.pid, T.TID: 0,
                         T.TS: sim.rel(sim.series[9]["t"]), T.S: "g", T.ARGS: {F.REPLAYED: 0, F.LIVE: 0}},
                        separators=(",", ":"))
    with open(path, "rb") as f:
        lines = zlib.decompress(f.read(), 16 + zlib.MAX_WBITS).decode("utf-8").split("\n")
    # "[", the meta, then the outline; the window's mark among the events
    lines = lines[:2] + [x + "," for x in outline] + lines[2:]
    lines.insert(len(lines) - 3, window + ",")
    z = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with open(path, "wb") as f:
        f.write(z.compress("\n".join(lines).encode("utf-8")) + z.flush())


def make_oom(path):
    sim = synth.Sim(total=2 * GiB, cmdline="python3 train.py --batch 4096")
    train_loop(sim, steps=4, leak=0, oom_at=3, oom_request=1536 * MiB)
    sim.write(path, cut="flush")


def make_trials(path):
    synth.conv_doubling(trials=6).write(path)


def make_cuda(path):
    """A solver: setup, then iterations inside solve, each with a scratch
    buffer, a workspace that grows, and copies' staging in pinned memory."""
    sim = synth.Sim(mode="cuda", total=4 * GiB, cmdline="./solver --n 4096")
    sim.push("setup")
    a = sim.alloc(256 * MiB, "other")
    b = sim.alloc(128 * MiB, "other")
    sim.pop()
    sim.push("solve")
    ws = []
    for it in range(8):
        sim.tick(20000)
        sim.push("iteration")
        sim.push("factorize")
        s = sim.alloc(64 * MiB, "other")
        ws.append(sim.alloc(8 * MiB * (it + 1), "other"))
        sim.pop()
        sim.push("update")
        u = sim.alloc(32 * MiB, "other")
        sim.free(u)
        sim.pop()
        sim.free(s)
        sim.pop()
    sim.pop()
    for w in ws:
        sim.free(w)
    sim.free(b)
    sim.free(a)
    sim.write(path)


def make_hostile(path, torch_path):
    """A run of two processes. A CUDA program: every hostile name an NVTX
    range (its layers are its ranges, whole names), nested under the first;
    the failed allocation inside the control characters' range. A PyTorch
    program: modules named HOSTILE_MODULES."""
    sim = synth.Sim(mode="cuda", total=1 * GiB, cmdline=HOSTILE_CMDLINE)
    sim.push(HOSTILE_SCRIPT)
    sim.alloc(64 * MiB, "other")
    for i, name in enumerate(HOSTILE_NAMES[1:]):
        sim.push(name)
        sim.alloc((i + 1) * 16 * MiB, "other")
        sim.tick(5000)
        if name == HOSTILE_CONTROL:
            sim.oom(2 * GiB)
        sim.pop()
    sim.pop()
    sim.write(path)
    sim = synth.Sim(pid=4343, total=1 * GiB, cmdline="python3 %s.py" % HOSTILE_SCRIPT,
                    uuid="GPU-00000000-1111-2222-3333-555555555555")
    sim.torch_info()
    sim.alloc(32 * MiB, "parameters")
    for step in range(1, 4):
        sim.tick(10000)
        sim.push("fwd:<Net>")
        acts = []
        for i, name in enumerate(HOSTILE_MODULES):
            sim.push("fwd:" + name)
            acts.append(sim.alloc((i + 1) * 24 * MiB, "activations"))
            sim.pop()
        sim.pop()
        sim.push("phase:backward")
        for a in acts:
            sim.free(a)
        sim.pop()
        sim.mark("step:%d" % step)
    sim.write(torch_path)


# ---- large: N events written directly ----

def _template(obj):
    """A compact JSON line of obj whose string values "%..." become format
    fields (the quotes around numeric ones dropped)."""
    text = json.dumps(obj, separators=(",", ":"))
    for fld in ("%(ts).3f", "%(bytes)d", "%(corr)d", "%(id)d"):
        text = text.replace('"%s"' % fld, fld)
    return text


def _ts3(line):
    """A line of synth's with its ts written as the format says: exactly
    three decimals (synth writes 0.0)."""
    return re.sub(r'"%s":(-?\d+(?:\.\d+)?)' % T.TS, lambda m: '"%s":%.3f' % (T.TS, float(m.group(1))), line, count=1)


def make_large(path, n=10_000_000, layers=24):
    """A tensor-mode loop as the recorder writes it with its API callbacks
    (each allocation and free one event, thread and API in it): per step
    a forward over `layers` layers (fwd:<Net> > fwd:layers.K, an activation
    kept and a temporary), a backward (phase:backward; the activations
    freed, a temporary per layer), an optimizer step, and a step mark; one
    event a microsecond, a watermark every 500 ms, in time order (a valid
    order: watermarks hold). About 200 events a step; a 4 KiB allocation
    kept every 10 steps (a slow leak). The last step is followed by NVTX
    marks up to exactly n events. Returns {events, steps, leaked}."""
    sim = synth.Sim(total=80 * GiB, cmdline="python3 train_large.py", callbacks=True)
    sim.torch_info()
    gpu = sim.gpu_pid
    mem = lambda name: _template({
        T.PH: "i", T.NAME: name, T.CAT: CAT.MEMORY, T.PID: gpu, T.TID: 7, T.TS: "%(ts).3f", T.S: "t",
        T.ARGS: {F.ADDR: "%(addr)s", F.BYTES: "%(bytes)d", F.KIND: KIND.DEVICE, F.DEVICE: sim.device,
                 F.STREAM: 7, F.CORR: "%(corr)d", F.ASYNC: True, F.THREAD: "%(tid)d",
                 F.API: "cuMemAllocAsync" if name == EV.ALLOC.name else "cuMemFreeAsync"}}
    ).replace('"%(tid)d"', "%(tid)d")
    alloc_t, free_t = mem(EV.ALLOC.name), mem(EV.FREE.name)
    push_t = _template({T.PH: "B", T.NAME: "%(name)s", T.CAT: CAT.NVTX, T.PID: sim.pid, T.TID: MAIN,
                        T.TS: "%(ts).3f", T.ARGS: {F.DOMAIN: "default"}})
    pop_t = _template({T.PH: "E", T.NAME: "", T.CAT: CAT.NVTX, T.PID: sim.pid, T.TID: MAIN, T.TS: "%(ts).3f"})
    mark_t = _template({T.PH: "i", T.NAME: "%(name)s", T.CAT: CAT.NVTX, T.PID: sim.pid, T.TID: MAIN,
                        T.TS: "%(ts).3f", T.S: "t", T.ARGS: {F.DOMAIN: "default"}})
    wm_t = _template({T.PH: "i", T.NAME: EV.WATERMARK.name, T.CAT: CAT.GPUPROF, T.PID: sim.pid, T.TID: 0,
                      T.TS: "%(ts).3f", T.S: "g"})

    z = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = open(path, "wb")
    head = [_ts3(x) for x in sim.lines(shuffle=False, watermarks=False, end=False)]  # meta, device, name, torch
    buf = ["[\n" + ",\n".join(head)]
    state = {"ts": 1000.0, "corr": 0, "events": len(head), "next_wm": synth.FLUSH_US, "leaks": 0}
    free_addrs = []
    next_addr = [0x7F0000000000]

    def emit(line):
        buf.append(line)
        state["events"] += 1
        state["ts"] += 1.0
        if state["ts"] >= state["next_wm"]:
            # everything before the previous flush's edge was written
            buf.append(wm_t % {"ts": state["next_wm"] - synth.FLUSH_US})
            state["events"] += 1
            state["next_wm"] += synth.FLUSH_US

    sizes = {}

    def alloc(nbytes, tid=MAIN):
        if free_addrs:
            addr = free_addrs.pop()
        else:
            addr = next_addr[0]
            next_addr[0] += 256 * MiB
        sizes[addr] = nbytes
        state["corr"] += 1
        emit(alloc_t % {"ts": state["ts"], "addr": "0x%x" % addr, "bytes": nbytes, "corr": state["corr"],
                        "tid": tid})
        return addr

    def free(addr, tid=MAIN):
        state["corr"] += 1
        emit(free_t % {"ts": state["ts"], "addr": "0x%x" % addr, "bytes": sizes.pop(addr), "corr": state["corr"],
                       "tid": tid})
        free_addrs.append(addr)

    def push(name):
        emit(push_t % {"ts": state["ts"], "name": name})

    def pop():
        emit(pop_t % {"ts": state["ts"]})

    for k in range(layers):  # parameters
        alloc(4 * MiB + k * 64 * KiB)
    step = 0
    per_step = 4 * layers * 2 + 2 * layers + 12  # an upper bound of one step's events
    while state["events"] + per_step + 1 < n:
        step += 1
        push("fwd:<Net>")
        acts = []
        for k in range(layers):
            push("fwd:layers.%d" % k)
            tmp = alloc(2 * MiB)
            acts.append(alloc(8 * MiB + k * 4 * KiB))
            free(tmp)
            pop()
        pop()
        if step % 10 == 0:
            state["leaks"] += 1
            addr = next_addr[0]
            next_addr[0] += 64 * KiB
            sizes[addr] = 4 * KiB
            state["corr"] += 1
            emit(alloc_t % {"ts": state["ts"], "addr": "0x%x" % addr, "bytes": 4 * KiB, "corr": state["corr"],
                            "tid": MAIN})
        push("phase:backward")
        for a in reversed(acts):
            t = alloc(1 * MiB, AUTOGRAD)
            free(t, AUTOGRAD)
            free(a, AUTOGRAD)
        pop()
        push("phase:optimizer.step")
        t = alloc(16 * MiB)
        free(t)
        pop()
        emit(mark_t % {"ts": state["ts"], "name": "step:%d" % step})
        if len(buf) > 20000:
            out.write(z.compress((",\n".join(buf) + ",\n").encode()))
            buf.clear()
    # fill up to exactly n events with marks, then the end
    while state["events"] < n - 1:
        emit(mark_t % {"ts": state["ts"], "name": "fill"})
    sim.t = state["ts"]
    end = _ts3(sim.lines(shuffle=False, watermarks=False)[-1])
    buf.append(end)
    state["events"] += 1
    out.write(z.compress((",\n".join(buf) + "\n]\n").encode()))
    out.write(z.flush())
    out.close()
    return {"events": state["events"], "steps": step, "leaked": state["leaks"] * 4 * KiB}


def make(kind, outdir, n=None):
    """Writes the trace of kind into outdir; returns the paths of its
    traces (hostile: two processes, the others one)."""
    os.makedirs(outdir, exist_ok=True)
    if kind == "large":
        n = int(n or 10_000_000)
        path = os.path.join(outdir, "large.%d.json.gz" % n)
        make_large(path, n)
        return [path]
    path = os.path.join(outdir, kind + ".json.gz")
    if kind == "hostile":
        more = os.path.join(outdir, kind + ".torch.json.gz")
        make_hostile(path, more)
        return [path, more]
    if kind == "train":
        make_train(path)
    elif kind == "wide":
        make_train(path, wide={"blocks.1.mlp": 96 * MiB})
    elif kind == "oom":
        make_oom(path)
    elif kind == "flight":
        make_flight(path)
    elif kind == "cuda":
        make_cuda(path)
    elif kind == "trials":
        make_trials(path)
    else:
        raise SystemExit("unknown trace kind %s" % kind)
    return [path]


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    t0 = time.monotonic()
    for p in make(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else None):
        print(p)
    print("%.1f s" % (time.monotonic() - t0), file=sys.stderr)
