"""Synthetic gpuprof traces with known answers, for the tests of
`gpuprof analyze` (exporters/TRACE_FORMAT.md is the format).

A Sim plays a program: allocations and frees (each with its CUDA API call),
NVTX ranges, marks, failed allocations. It keeps its own account of what is
alive, by the category the scenario says each allocation is, so the tests
compare the analyzer's answers with numbers computed independently of it.

write() lays the events out the way the recorder does: host events (NVTX,
oom) as they happen, CUPTI records (allocations, API calls) one flush later
and shuffled within each flush, and after each flush a gpuprof.watermark
lagging one flush behind.

  synth.py SCENARIO OUTDIR     writes OUTDIR/SCENARIO*.json.gz and
                               OUTDIR/SCENARIO.expected.json
"""
import gzip
import json
import os
import random
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "exporters"))
from trace_format import CAT, EV, F, KIND, T  # noqa: E402  (the names of the trace)

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
FLUSH_US = 500_000.0
MAIN, AUTOGRAD, COMM = 100, 101, 103


class Sim:
    def __init__(self, mode="tensor", pid=4242, device=0, total=16 * GiB,
                 uuid="GPU-00000000-1111-2222-3333-444444444444", ts_base=1_700_000_000_000_000_000,
                 cmdline="python3 train.py", start_us=1000.0, callbacks=False, statics=None,
                 memory_device=None):
        self.mode, self.pid, self.device, self.total, self.uuid = mode, pid, device, total, uuid
        # stream-ordered allocations as the recorder's API callbacks write
        # them: thread and API in the event, the driver call's corr (no API
        # event), no pool args
        self.callbacks = callbacks
        self.statics = statics  # gpuprof.meta's "statics" (run, none); None: unsaid
        # gpuprof.meta's "memory_device" ("context": module globals on their
        # own device, as recorders since then say); None: unsaid (older)
        self.memory_device = memory_device
        self.ts_base, self.cmdline = ts_base, cmdline
        self.gpu_pid = 1_000_000_000 + pid * 100 + device
        self.t = start_us
        self.host = []   # (ts, seq, line): written when they happen
        self.cupti = []  # (ts, seq, line): written a flush later, shuffled
        self.seq = 0
        self.corr = 0
        self.next_addr = 0x7F0000000000
        self.live = {}   # addr -> dict(bytes, cat, fw, step, phase, layer, t)
        self.fw = 0      # the framework's live device bytes (the analyzer's "main")
        self.other = 0
        self.pool = 0
        self.pool_peak = 0
        self.frag_worst = 0
        self.peak = None
        self.step = 0    # last step mark
        self.stack = {}  # tid -> [names]
        self.bwd = {}    # tid -> (id, name)
        self.range_id = 0
        self.phases = []
        self.series = []  # (step, fw, total) at each mark
        self.ooms = []
        self.allocs = 0
        self.other_allocs = 0
        self.frees = 0
        self.end_args = {F.CLEAN: True, F.RECOVERED: False, F.DROPPED_CUPTI: 0, F.DROPPED_HOST: 0,
                         F.LATE_MEMORY_RECORDS: 0}
        self.segments_named = []

    # ---- time and output ----
    def tick(self, us=10.0):
        self.t += us

    def _emit(self, where, ts, obj):
        self.seq += 1
        where.append((ts, self.seq, json.dumps(obj, separators=(",", ":"), ensure_ascii=False)))

    def rel(self, us):
        return round(us, 3)

    # ---- attribution, as the analyzer should see it ----
    def layer(self, tid):
        fwd = [n for n in self.stack.get(tid, []) if n.startswith("fwd:")]
        if fwd:
            root, inner = fwd[0][4:], fwd[-1][4:]
            if root != inner and root.startswith("<"):
                return root + "." + inner
            return inner
        if tid in self.bwd:
            path = self.bwd[tid][1][4:]
            return self.root + "." + path if getattr(self, "root", None) else path
        return None

    def phase(self, tid):
        if self.phases:
            return self.phases[-1]
        if any(n.startswith("fwd:") for n in self.stack.get(tid, [])):
            return "forward"
        return "none"

    # ---- events ----
    def api(self, name, tid, start, end, corr):
        self._emit(self.cupti, start, {T.PH: "X", T.NAME: name, T.CAT: CAT.CUDA_RUNTIME, T.PID: self.pid,
                                       T.TID: tid, T.TS: self.rel(start), T.DUR: self.rel(end - start),
                                       T.ARGS: {F.CORR: corr}})

    def kernel(self, name, start, dur, stream=13, corr=0):
        self._emit(self.cupti, start, {T.PH: "X", T.NAME: name, T.CAT: CAT.KERNEL, T.PID: self.gpu_pid,
                                       T.TID: stream, T.TS: self.rel(start), T.DUR: self.rel(dur),
                                       T.ARGS: {F.CORR: corr, F.GRID: [1, 1, 1], F.BLOCK: [512, 1, 1],
                                                F.SMEM_STATIC: 0, F.SMEM_DYNAMIC: 0, F.REGS: 32}})

    def collective(self, op, launch, start, dur, stream=13, tid=COMM, call=False, generic=False):
        """An NCCL kernel and the driver call that launched it (ending at
        launch), times in us, as the recorder writes them; kept in colls.
        call: inside NCCL's NVTX range of the call ("ncclAllGather"), which
        names it; generic: the kernel is ncclDevKernel_Generic_1, whose name
        says nothing of the collective."""
        self.corr += 1
        if call:
            for ph, ts in (("B", launch - 6.0), ("E", launch + 1.0)):
                self._emit(self.host, ts, {T.PH: ph, T.NAME: "nccl" + op if ph == "B" else "", T.CAT: CAT.NVTX,
                                           T.PID: self.pid, T.TID: tid, T.TS: self.rel(ts),
                                           T.ARGS: {F.DOMAIN: "NCCL"}})
        self._emit(self.cupti, launch - 4.0, {T.PH: "X", T.NAME: "cuLaunchKernelEx", T.CAT: CAT.CUDA_DRIVER,
                                              T.PID: self.pid, T.TID: tid, T.TS: self.rel(launch - 4.0),
                                              T.DUR: 4.0, T.ARGS: {F.CORR: self.corr}})
        kernel = "ncclDevKernel_Generic_1" if generic else "ncclDevKernel_%s_RING_LL" % op
        self.kernel(kernel + "(ncclDevKernelArgsStorage<4096ul>)", start, dur, stream, self.corr)
        self.colls = getattr(self, "colls", [])
        self.colls.append({"op": op, "kernel": kernel, "launch": launch, "start": start, "end": start + dur,
                           "stream": stream, "tid": tid})

    def collectives_at(self, t):
        """What the analyzer should say of moment t (us): those outstanding
        (launched by t, ending after it) by launch, the last to end by t,
        the first launched after it; None where the device ran none."""
        colls = getattr(self, "colls", [])
        if not colls:
            return None
        during = sorted((c for c in colls if c["launch"] <= t < c["end"]), key=lambda c: c["launch"])
        ended = [c for c in colls if c["end"] <= t]
        later = [c for c in colls if c["launch"] > t]
        return {"during": [c["op"] for c in during],
                "before": max(ended, key=lambda c: c["end"])["op"] if ended else None,
                "after": min(later, key=lambda c: c["launch"])["op"] if later else None,
                "seen": len(colls)}

    def is_fw(self, kind, async_):
        if kind not in (KIND.DEVICE, KIND.ARRAY):
            return None
        if self.mode == "tensor":
            return async_
        return True  # native: set apart later by the named segments; cuda: all

    def _memory_event(self, name, api, addr, nbytes, kind, async_, tid, pool_used, caller=None):
        """An alloc or free event as the recorder writes it, in the middle of
        its API call (pool_used: the pool's fields, for a framework pool's
        event); returns its time."""
        self.corr += 1
        corr = self.corr
        start = self.t
        self.t += 2.0
        at = self.t
        self.t += 3.0
        args = {F.ADDR: "0x%x" % addr, F.BYTES: nbytes, F.KIND: kind, F.DEVICE: self.device,
                F.STREAM: 7 if async_ else -1, F.CORR: corr, F.ASYNC: async_}
        if caller:
            args[F.CALLER] = caller
        ev = {T.PH: "i", T.NAME: name, T.CAT: CAT.MEMORY, T.PID: self.gpu_pid,
              T.TID: 7 if async_ else 0, T.TS: self.rel(at), T.S: "t", T.ARGS: args}
        if async_ and self.callbacks:
            args.update({F.THREAD: tid, F.API: api.replace("cudaMalloc", "cuMemAlloc").replace(
                "cudaFree", "cuMemFree")})
            self._emit(self.host, at, ev)
            return at
        if pool_used is not None:
            args.update({F.POOL: "0x5000", F.POOL_TYPE: "local", F.POOL_SIZE: self.pool,
                         "pool_used": pool_used})
        self._emit(self.cupti, at, ev)
        self.api(api, tid, start, self.t, corr)
        return at

    def alloc(self, nbytes, cat, tid=MAIN, async_=None, api=None, kind=KIND.DEVICE, addr=None, fw=None,
              caller=None):
        if async_ is None:
            async_ = self.mode == "tensor"
        if api is None:
            api = "cudaMallocAsync" if async_ else "cudaMalloc"
        if addr is None:
            addr = self.next_addr
            self.next_addr += (nbytes + 0xFFF) & ~0xFFF
        isfw = self.is_fw(kind, async_) if fw is None else fw
        pool_used = None
        if isfw and async_:
            # a pool that grows by 32 MiB and never shrinks
            pool_used = self.fw + nbytes
            while self.pool < pool_used:
                self.pool += 32 * MiB
            self.pool_peak = max(self.pool_peak, self.pool)
        at = self._memory_event(EV.ALLOC.name, api, addr, nbytes, kind, async_, tid, pool_used, caller)
        rec = {"bytes": nbytes, "cat": cat, "fw": isfw, "step": self.step + 1, "phase": self.phase(tid),
               "layer": self.layer(tid), "t": at, "kind": kind, "api": api}
        self.live[addr] = rec
        if isfw:
            self.fw += nbytes
            self.allocs += 1
            if self.pool:
                self.frag_worst = max(self.frag_worst, self.pool - self.fw)
            if self.peak is None or self.fw > self.peak["bytes"]:
                self.peak = {"bytes": self.fw, "t": at, "step": self.step + 1, "phase": self.phase(tid),
                             "layer": self.layer(tid),
                             "live": {a: dict(r) for a, r in self.live.items() if r["fw"] is not None},
                             "other": self.other}
        elif isfw is False:
            self.other += nbytes
            self.other_allocs += 1
        return addr

    def free(self, addr, tid=MAIN):
        rec = self.live.pop(addr)
        async_ = rec["api"] == "cudaMallocAsync"
        self._memory_event(EV.FREE.name, "cudaFreeAsync" if async_ else "cudaFree", addr, rec["bytes"],
                           rec["kind"],
                           async_, tid, self.fw - rec["bytes"] if rec["fw"] and async_ else None)
        if rec["fw"]:
            self.fw -= rec["bytes"]
            if self.pool:
                self.frag_worst = max(self.frag_worst, self.pool - self.fw)
        elif rec["fw"] is False:
            self.other -= rec["bytes"]
        self.frees += 1
        return rec

    def push(self, name, tid=MAIN):
        self.tick(1)
        self._emit(self.host, self.t, {T.PH: "B", T.NAME: name, T.CAT: CAT.NVTX, T.PID: self.pid, T.TID: tid,
                                       T.TS: self.rel(self.t), T.ARGS: {F.DOMAIN: "default"}})
        self.stack.setdefault(tid, []).append(name)
        if name.startswith("phase:"):
            self.phases.append(name[6:])
        if name.startswith("fwd:<"):
            self.root = name[4:]

    def pop(self, tid=MAIN):
        self.tick(1)
        self._emit(self.host, self.t, {T.PH: "E", T.NAME: "", T.CAT: CAT.NVTX, T.PID: self.pid, T.TID: tid,
                                       T.TS: self.rel(self.t)})
        name = self.stack[tid].pop()
        if name.startswith("phase:"):
            self.phases.remove(name[6:])

    def bwd_start(self, path, tid=AUTOGRAD):
        if tid in self.bwd:
            self.bwd_end(tid)
        self.tick(1)
        self.range_id += 1
        name = "bwd:" + path
        self._emit(self.host, self.t, {T.PH: "b", T.NAME: name, T.CAT: CAT.NVTX, T.PID: self.pid, T.TID: tid,
                                       T.TS: self.rel(self.t), T.ID: self.range_id,
                                       T.ARGS: {F.DOMAIN: "default"}})
        self.bwd[tid] = (self.range_id, name)

    def bwd_end(self, tid=AUTOGRAD, on=MAIN):
        self.tick(1)
        rid, name = self.bwd.pop(tid)
        self._emit(self.host, self.t, {T.PH: "e", T.NAME: name, T.CAT: CAT.NVTX, T.PID: self.pid, T.TID: on,
                                       T.TS: self.rel(self.t), T.ID: rid})

    def mark(self, name, tid=MAIN):
        self.tick(1)
        self._emit(self.host, self.t, {T.PH: "i", T.NAME: name, T.CAT: CAT.NVTX, T.PID: self.pid, T.TID: tid,
                                       T.TS: self.rel(self.t), T.S: "t", T.ARGS: {F.DOMAIN: "default"}})
        if name.startswith("step:"):
            self.step = int(name[5:])
            self.series.append({"step": self.step, "live": self.fw, "total": self.fw + self.other,
                                "t": self.t})

    def oom(self, nbytes, tid=MAIN, api=None, free=None, context=512 * MiB):
        api = api or ("cudaMallocAsync" if self.mode == "tensor" else "cudaMalloc")
        self.tick(5)
        held = self.fw + self.other
        if free is None:
            free = max(0, self.total - held - context)
        self._emit(self.host, self.t, {T.PH: "i", T.NAME: EV.OOM.name, T.CAT: CAT.MEMORY, T.PID: self.pid,
                                       T.TID: tid, T.TS: self.rel(self.t), T.S: "p",
                                       T.ARGS: {F.API: api, F.BYTES: nbytes, F.DEVICE: self.device,
                                                F.FREE: free, F.TOTAL: self.total, F.RESULT: 2,
                                                F.ERROR: "cudaErrorMemoryAllocation"}})
        rec = {"t": self.t, "request": nbytes, "step": self.step + 1, "phase": self.phase(tid),
               "layer": self.layer(tid), "free": free, "fw": self.fw, "other": self.other,
               "live": {a: dict(r) for a, r in self.live.items() if r["fw"] is not None}}
        self.ooms.append(rec)
        return rec

    def torch_info(self, alloc_conf="", history=False):
        self.mark("gpuprof:torch " + json.dumps({"torch": "2.11.0", "mode": self.mode,
                                                 "alloc_conf": alloc_conf, "backend": "native"
                                                 if self.mode != "tensor" else "cudaMallocAsync",
                                                 "pid": self.pid, "ops": False, "history": history},
                                                sort_keys=True))

    def name_segments(self):
        for addr, r in sorted(self.live.items()):
            if r["fw"] and r["cat"] != "other":
                self.mark("gpuprof:torch.segment 0x%x %d" % (addr, r["bytes"]))

    # ---- the file ----
    def lines(self, shuffle=True, watermarks=True, seed=1, end=True, late=None):
        meta = {T.PH: "i", T.NAME: EV.META.name, T.CAT: CAT.GPUPROF, T.PID: self.pid, T.TID: 0, T.TS: 0.0,
                T.S: "g", T.ARGS: {F.FORMAT: 1, F.VERSION: "0.1.0", F.PID: self.pid, F.PPID: 1,
                                   F.CMDLINE: self.cmdline, F.HOSTNAME: "synth",
                                   F.START_UNIX_NS: 1_700_000_000_000_000_000 + 1000,
                                   F.TS_BASE_NS: self.ts_base, F.CLOCK: "cupti", F.MODE: self.mode,
                                   F.GPU_PID_BASE: 1_000_000_000 + self.pid * 100}}
        if self.statics is not None:
            meta[T.ARGS][F.STATICS] = self.statics
        if self.memory_device is not None:
            meta[T.ARGS][F.MEMORY_DEVICE] = self.memory_device
        for key, field in (("rank", F.RANK), ("world_size", F.WORLD_SIZE), ("local_rank", F.LOCAL_RANK),
                           ("local_world_size", F.LOCAL_WORLD_SIZE), ("job_start", F.JOB_START_UNIX_NS)):
            if getattr(self, key, None) is not None:
                meta[T.ARGS][field] = getattr(self, key)
        dev = {T.PH: "i", T.NAME: EV.DEVICE.name, T.CAT: CAT.GPUPROF, T.PID: self.gpu_pid, T.TID: 0,
               T.TS: 0.0, T.S: "g", T.ARGS: {F.DEVICE: self.device, F.NAME: "Synthetic GPU",
                                             F.TOTAL_MEMORY: self.total, F.UUID: self.uuid, F.CC: "9.0",
                                             F.GPU_PID: self.gpu_pid}}
        out = [json.dumps(meta, separators=(",", ":")), json.dumps(dev, separators=(",", ":")),
               json.dumps({T.PH: "M", T.NAME: EV.PROCESS_NAME.name, T.PID: self.pid, T.TID: 0, T.TS: 0.0,
                           T.ARGS: {F.NAME: "%s (pid %d)" % (self.cmdline, self.pid)}},
                          separators=(",", ":"))]
        rng = random.Random(seed)
        if not shuffle:
            for _, _, line in sorted(self.host + self.cupti):
                out.append(line)
        else:
            host = sorted(self.host)
            cupti = sorted(self.cupti)
            last = max([e[0] for e in host + cupti] + [0.0])
            nflush = int(last // FLUSH_US) + 3
            hi = ci = 0
            for k in range(nflush):
                edge = (k + 1) * FLUSH_US
                batch = []
                while hi < len(host) and host[hi][0] < edge:
                    batch.append(host[hi])
                    hi += 1
                # CUPTI hands over the previous flush's records
                while ci < len(cupti) and cupti[ci][0] < edge - FLUSH_US:
                    batch.append(cupti[ci])
                    ci += 1
                rng.shuffle(batch)
                out.extend(line for _, _, line in batch)
                if watermarks and k >= 1:
                    out.append(json.dumps({T.PH: "i", T.NAME: EV.WATERMARK.name, T.CAT: CAT.GPUPROF,
                                           T.PID: self.pid, T.TID: 0, T.TS: round((k - 1) * FLUSH_US, 3),
                                           T.S: "g"}, separators=(",", ":")))
            rest = host[hi:] + cupti[ci:]
            out.extend(line for _, _, line in rest)
        if late:
            out.extend(late)
        if end:
            args = dict(self.end_args)
            args[F.DEVICES] = [{F.DEVICE: self.device, F.NAME: "Synthetic GPU", F.TOTAL_MEMORY: self.total}]
            out.append(json.dumps({T.PH: "i", T.NAME: EV.END.name, T.CAT: CAT.GPUPROF, T.PID: self.pid,
                                   T.TID: 0, T.TS: round(self.t + 10, 3), T.S: "g", T.ARGS: args},
                                  separators=(",", ":")))
        return out

    def write(self, path, gz=True, cut=None, **kw):
        lines = self.lines(end=cut is None, **kw)
        data = ("[\n" + ",\n".join(lines) + ("\n]\n" if cut is None else ",\n")).encode()
        if not gz:
            open(path, "wb").write(data)
            return
        z = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        if cut is None:
            blob = z.compress(data) + z.flush()
        else:
            # what a killed recorder leaves: sync-flushed data, no trailer,
            # the last line half written
            blob = z.compress(data) + z.flush(zlib.Z_SYNC_FLUSH)
            # an alloc's line cut in its category
            cut_line = json.dumps({T.PH: "i", T.NAME: EV.ALLOC.name, T.CAT: CAT.MEMORY}, separators=(",", ":"))
            blob += z.compress(cut_line[:cut_line.index(CAT.MEMORY) + 3].encode()) + z.flush(zlib.Z_SYNC_FLUSH)
            if cut == "middle":
                blob = blob[: len(blob) - 7]
        open(path, "wb").write(blob)


class HookSim(Sim):
    """Native mode with gpuprof's hook on PyTorch's caching allocator: the
    framework's tensors are blocks (torch.alloc and torch.free on the
    allocating thread, sizes rounded up to 512 B as PyTorch's are) inside
    segments, each a cudaMalloc (the API callbacks' event) followed by its
    torch.segment_alloc at the same address, as PyTorch makes them; another
    library's cudaMalloc is other memory. With stacks, the main thread's
    blocks name a Python stack: the user's line of the module running
    (line_of), under a frame of torch's own; without stacks only those no
    module names. The autograd thread's blocks, made while backward() runs,
    name backward()'s caller (BACKWARD_LINE), with stacks or without, as
    the hook does."""

    SEGMENT = 64 * MiB
    SCRIPT = "/work/train.py"
    LINES = {None: 90, "<Net>": 40, "<Net>.fc1": 41, "<Net>.fc2": 42}
    BACKWARD_LINE = 93

    def __init__(self, stacks=False, before=(0, 0), **kw):
        kw.setdefault("memory_device", "context")
        super().__init__(mode="native", **kw)
        self.stacks_on = stacks
        self.segs = {}           # address -> bytes
        self.reserved = self.reserved_peak = 0
        self.holes = []          # [address, bytes] of freed blocks, reused first fit
        self.stack_ids = {}      # frames -> id
        self.torch_info_tracker = "on"
        # (free bytes before it, block, segment) of each segment reserved
        # while the free bytes could have held its block: fragmentation
        self.split = []
        self.attach(*before)

    def rnd(self, nbytes):
        return max(512, (nbytes + 511) // 512 * 512)

    def torch_info(self, alloc_conf="", history=False):
        self.mark("gpuprof:torch " + json.dumps({"torch": "2.11.0", "mode": "native", "alloc_conf": alloc_conf,
                                                 "backend": "native", "pid": self.pid, "ops": False,
                                                 "history": history, "tracker": self.torch_info_tracker,
                                                 "stacks": self.stacks_on}, sort_keys=True))

    def host_event(self, name, args, tid=0, scope="t", pid=None):
        self.tick(1)
        self._emit(self.host, self.t, {T.PH: "i", T.NAME: name, T.CAT: CAT.MEMORY,
                                       T.PID: self.pid if pid is None else pid, T.TID: tid,
                                       T.TS: self.rel(self.t), T.S: scope, T.ARGS: args})
        return self.t

    def attach(self, allocated=0, reserved=0):
        self.host_event(EV.TORCH_ATTACH.name, {F.DEVICE: self.device, F.ALLOCATED: allocated,
                                               F.RESERVED: reserved, F.STACKS: self.stacks_on}, scope="g")

    def line_of(self, tid):
        """The user's line the main thread's allocation stands for."""
        if tid != MAIN:
            return self.BACKWARD_LINE if "backward" in self.phases else None
        if "optimizer.step" in self.phases:
            return 95
        return self.LINES.get(self.layer(tid), 90)

    def stack_id(self, tid):
        line = self.line_of(tid)
        if line is None or (not self.stacks_on and tid == MAIN and self.layer(tid) is not None):
            return None, None  # without stacks, a block a module names has none
        inner = ("/usr/lib/python3/dist-packages/torch/_tensor.py", 626, "backward") if tid != MAIN else \
            ("/usr/lib/python3/dist-packages/torch/nn/functional.py", 2000, "linear")
        frames = (inner, (self.SCRIPT, line, "forward" if line in (40, 41, 42) else "main"),
                  (self.SCRIPT, 120, "<module>"))
        if frames not in self.stack_ids:
            self.stack_ids[frames] = len(self.stack_ids) + 1
            self.host_event(EV.TORCH_STACK.name, {F.STACK: self.stack_ids[frames],
                                                  F.FRAMES: [list(f) for f in frames]}, scope="g")
        return self.stack_ids[frames], "train.py:%d in %s" % (line, frames[1][2])

    def cuda_event(self, name, addr, nbytes, tid):
        """A cudaMalloc or cudaFree as the API callbacks write it."""
        return self.host_event(name, {F.ADDR: "0x%x" % addr, F.BYTES: nbytes, F.KIND: KIND.DEVICE,
                                      F.DEVICE: self.device, F.STREAM: -1, F.CORR: 0, F.ASYNC: False,
                                      F.THREAD: tid, F.API: "cuMemAlloc_v2" if name == EV.ALLOC.name
                                      else "cuMemFree_v2"}, pid=self.gpu_pid)

    def segment(self, nbytes, tid=MAIN):
        addr = self.next_addr
        self.next_addr += nbytes
        self.cuda_event(EV.ALLOC.name, addr, nbytes, tid)
        self.host_event(EV.TORCH_SEGMENT_ALLOC.name, {F.ADDR: "0x%x" % addr, F.BYTES: nbytes,
                                                      F.DEVICE: self.device, F.STREAM: "0x0",
                                                      F.MAPPED: False}, pid=self.gpu_pid)
        self.segs[addr] = nbytes
        self.reserved += nbytes
        self.reserved_peak = max(self.reserved_peak, self.reserved)
        return addr

    def release_segment(self, addr, tid=MAIN):
        nbytes = self.segs.pop(addr)
        self.host_event(EV.TORCH_SEGMENT_FREE.name, {F.ADDR: "0x%x" % addr, F.BYTES: nbytes,
                                                     F.DEVICE: self.device, F.STREAM: "0x0",
                                                     F.MAPPED: False}, pid=self.gpu_pid)
        self.cuda_event(EV.FREE.name, addr, nbytes, tid)
        self.reserved -= nbytes

    def alloc(self, nbytes, cat, tid=MAIN, async_=None, api=None, kind=KIND.DEVICE, addr=None, fw=None):
        if api == "cudaMalloc" or fw is False or kind not in (KIND.DEVICE, KIND.ARRAY):
            # another library's (cuBLAS's workspace...): other memory
            a = self.next_addr
            self.next_addr += (nbytes + 0xFFF) & ~0xFFF
            at = self.cuda_event(EV.ALLOC.name, a, nbytes, tid)
            self.live[a] = {"bytes": nbytes, "cat": "other", "fw": False, "step": self.step + 1,
                            "phase": self.phase(tid), "layer": self.layer(tid), "t": at, "kind": kind,
                            "api": "cuMemAlloc_v2", "line": None, "requested": None}
            self.other += nbytes
            self.other_allocs += 1
            return a
        block = self.rnd(nbytes)
        hole = next((h for h in self.holes if h[1] >= block), None)
        if hole is None:
            seg = max(self.SEGMENT, (block + 2 * MiB - 1) // (2 * MiB) * 2 * MiB)
            if self.reserved - self.fw >= block:
                self.split.append((self.reserved - self.fw, block, seg))
            hole = [self.segment(seg, tid), seg]
            self.holes.append(hole)
        a = hole[0]
        hole[0] += block
        hole[1] -= block
        if not hole[1]:
            self.holes.remove(hole)
        sid, line = self.stack_id(tid)
        args = {F.ADDR: "0x%x" % a, F.BYTES: block, F.REQUESTED: nbytes, F.DEVICE: self.device,
                F.STREAM: "0x0"}
        if sid:
            args[F.STACK] = sid
        at = self.host_event(EV.TORCH_ALLOC.name, args, tid=tid)
        self.live[a] = {"bytes": block, "cat": cat, "fw": True, "step": self.step + 1, "phase": self.phase(tid),
                        "layer": self.layer(tid), "t": at, "kind": kind, "api": "PyTorch caching allocator",
                        "line": line, "requested": nbytes}
        self.fw += block
        self.allocs += 1
        self.frag_worst = max(self.frag_worst, self.reserved - self.fw)
        if self.peak is None or self.fw > self.peak["bytes"]:
            self.peak = {"bytes": self.fw, "t": at, "step": self.step + 1, "phase": self.phase(tid),
                         "layer": self.layer(tid), "reserved": self.reserved,
                         "live": {k: dict(r) for k, r in self.live.items() if r["fw"] is not None},
                         "other": self.other}
        return a

    def free(self, addr, tid=MAIN):
        rec = self.live[addr]
        if not rec["fw"]:
            self.live.pop(addr)
            self.cuda_event(EV.FREE.name, addr, rec["bytes"], tid)
            self.other -= rec["bytes"]
            self.frees += 1
            return rec
        self.live.pop(addr)
        self.holes.append([addr, rec["bytes"]])
        self.host_event(EV.TORCH_FREE.name, {F.ADDR: "0x%x" % addr, F.BYTES: rec["bytes"],
                                             F.REQUESTED: rec["requested"], F.DEVICE: self.device,
                                             F.STREAM: "0x0"}, tid=tid)
        self.fw -= rec["bytes"]
        self.frees += 1
        self.frag_worst = max(self.frag_worst, self.reserved - self.fw)
        return rec

    def name_tensor(self, addr, layer):
        """The hooks' gpuprof:torch.tensor mark: addr holds a parameter of layer."""
        rec = self.live[addr]
        self.mark("gpuprof:torch.tensor 0x%x %d %s" % (addr, rec["requested"], layer))
        rec["layer"] = layer
        if self.peak and addr in self.peak["live"]:
            self.peak["live"][addr]["layer"] = layer

    def oom(self, nbytes, tid=MAIN, api=None, free=None, context=512 * MiB):
        """PyTorch fails to cudaMalloc the segment a request of nbytes needs
        (the callbacks' oom), then raises OutOfMemoryError (torch.oom)."""
        block = self.rnd(nbytes)
        size = 2 * MiB if block <= MiB else 20 * MiB if block < 10 * MiB else (block + 2 * MiB - 1) // (2 * MiB) * 2 * MiB
        if free is None:
            free = max(0, self.total - self.reserved - self.other - context)
        rec = super().oom(size, tid=tid, api="cuMemAlloc_v2", free=free, context=context)
        self.host_event(EV.TORCH_OOM.name, {F.BYTES: size, F.REQUESTED: block, F.DEVICE: self.device,
                                            F.FREE: rec["free"], F.ALLOCATED: self.fw, F.RESERVED: self.reserved,
                                            F.STREAM: "0x0"}, tid=tid, scope="p")
        rec.update({"request": size, "block": block, "reserved": self.reserved})
        return rec


def conv_doubling(trials, fatal=True, steps=True):
    """A hooked trace modelled on a convolutional batch search (conv_doubling
    on an H100): in each step's forward cuDNN asks for algorithm workspaces
    inside conv2; those that do not fit fail and PyTorch raises
    OutOfMemoryError, which the convolution catches, going on with a smaller
    workspace (trials per step). Step 2's forward has a cudaMalloc the
    allocator gets past by releasing its cache. Step 3's backward asks for
    16 GiB, PyTorch raises, and the program stops (fatal), or catches it and
    completes a step 4 (fatal=False)."""
    sim = HookSim(total=80 * GiB)
    sim.torch_info()
    params = sim.alloc(64 * MiB, "parameters")
    for step in (1, 2, 3):
        sim.push("fwd:<ConvNet>")
        sim.push("fwd:conv2")
        out = sim.alloc(4 * GiB, "activations")
        for i in range(trials):
            sim.oom(40 * GiB + i * GiB)      # an algorithm's workspace: raised, caught inside
            sim.free(sim.alloc(64 * MiB, "temporaries"))  # the next algorithm's
        if step == 2:
            sim.holes = []
            cached = sim.alloc(256 * MiB, "temporaries")
            sim.free(cached)
            Sim.oom(sim, 6 * GiB, api="cuMemAlloc_v2")
            sim.holes = [h for h in sim.holes if h[0] != cached]
            sim.release_segment(cached)       # released to retry, which succeeds
            sim.free(sim.alloc(6 * GiB, "temporaries"))
        sim.pop()
        sim.pop()
        sim.push("phase:backward")
        sim.bwd_start("<ConvNet>.conv2")
        if step == 3:
            sim.oom(16 * GiB, tid=AUTOGRAD)  # reaches the program
            sim.bwd_end()
            sim.pop()
            sim.free(out)
            break
        g = sim.alloc(8 * GiB, "temporaries", tid=AUTOGRAD)
        sim.free(g, tid=AUTOGRAD)
        sim.bwd_end()
        sim.pop()
        sim.free(out)
        if steps:
            sim.mark("step:%d" % step)
    if not fatal:
        sim.push("fwd:<ConvNet>")
        sim.free(sim.alloc(GiB, "activations"))
        sim.pop()
        sim.mark("step:3")
        sim.mark("step:4")
    sim.free(params)
    return sim


def lines_of(live):
    """Bytes by source line of what was live (device memory): the blocks'
    lines, and None for what has no stack (other libraries' too)."""
    out = {}
    for r in live.values():
        if r["fw"] is not None:
            out[r.get("line")] = out.get(r.get("line"), 0) + r["bytes"]
    return out


# ---- expected answers ----

def cats_of(live, fw_only=True):
    out = {}
    for r in live.values():
        if fw_only and r["fw"] is None:
            continue
        out[r["cat"]] = out.get(r["cat"], 0) + r["bytes"]
    return out


def expect_peak(sim):
    p = sim.peak
    live = {a: r for a, r in p["live"].items()}
    top = sorted(live.values(), key=lambda r: (-r["bytes"], r["t"]))
    return {"bytes": p["bytes"], "t_us": p["t"], "step": p["step"], "phase": p["phase"], "layer": p["layer"],
            "other": p["other"], "categories": cats_of(live),
            "top": [{"bytes": r["bytes"], "layer": r["layer"], "category": r["cat"], "step": r["step"]}
                    for r in top[:5]]}


# ---- a toy training loop ----

PARAMS = {"fc1": 64 * MiB, "fc2": 32 * MiB}


def train(sim, steps, leak=0, warmup_growth=0, grow_steps=3, oom_at=None, oom_request=0,
          set_to_none=True, act=(96 * MiB, 48 * MiB), cublas=8 * MiB, step_gap=20000.0, loss_grad=0):
    """Model <Net> with fc1, fc2; AdamW-like optimizer state made in step 1.
    loss_grad: bytes the autograd thread makes before any module's backward
    range (the loss's gradient), freed in fc2's."""
    sim.torch_info()
    params = {}
    for name, size in PARAMS.items():
        params[name] = sim.alloc(size, "parameters")
    grads = {}
    state = []
    x = None
    kept = []
    sim.tick(1000)
    for step in range(1, steps + 1):
        sim.tick(step_gap)
        # next batch
        if x is not None:
            sim.free(x)
        x = sim.alloc(16 * MiB, "inputs")
        # zero_grad(set_to_none=True) frees last step's gradients
        sim.push("phase:zero_grad")
        if set_to_none:
            for a in list(grads.values()):
                sim.free(a)
            grads = {}
        sim.pop()
        # forward
        sim.push("fwd:<Net>")
        sim.push("fwd:fc1")
        if step == 1 and cublas:
            sim.alloc(cublas, "other", async_=False, api="cudaMalloc", fw=(False if sim.mode == "tensor" else True))
        tmp = sim.alloc(4 * MiB, "temporaries")
        a1 = sim.alloc(act[0], "activations")
        sim.free(tmp)
        sim.pop()
        sim.push("fwd:fc2")
        if oom_at == step:
            sim.oom(oom_request)
            return {"x": x, "params": params}
        a2 = sim.alloc(act[1], "activations")
        if leak:
            kept.append(sim.alloc(leak, "activations"))
        sim.pop()
        sim.pop()
        loss = sim.alloc(512, "activations")
        # backward: the autograd thread, module ranges as start/end
        sim.push("phase:backward")
        lg = sim.alloc(loss_grad, "temporaries", tid=AUTOGRAD) if loss_grad else None
        sim.bwd_start("fc2")
        if lg is not None:
            sim.free(lg, tid=AUTOGRAD)
        g2 = sim.alloc(PARAMS["fc2"], "gradients", tid=AUTOGRAD) if "fc2" not in grads else None
        tmpb = sim.alloc(24 * MiB, "temporaries", tid=AUTOGRAD)
        sim.free(a2, tid=AUTOGRAD)
        sim.free(tmpb, tid=AUTOGRAD)
        sim.bwd_start("fc1")
        g1 = sim.alloc(PARAMS["fc1"], "gradients", tid=AUTOGRAD) if "fc1" not in grads else None
        sim.free(a1, tid=AUTOGRAD)
        sim.bwd_end(AUTOGRAD)
        sim.free(loss)
        sim.pop()
        if g2:
            grads["fc2"] = g2
        if g1:
            grads["fc1"] = g1
        # optimizer
        sim.push("phase:optimizer.step")
        if step == 1:
            for name, size in PARAMS.items():
                state.append(sim.alloc(size, "optimizer state"))
                state.append(sim.alloc(size, "optimizer state"))
        if warmup_growth and step <= grow_steps:
            state.append(sim.alloc(warmup_growth, "optimizer state"))
        t = sim.alloc(2 * MiB, "temporaries")
        sim.free(t)
        sim.pop()
        sim.mark("step:%d" % step)
    return {"x": x, "params": params}


def inference(sim, steps=3, blocks=6, act=64 * MiB, out=16 * MiB, no_grad=False, backward=False):
    """A model <MLP> of `blocks` blocks (fc, act) run on a batch per step.
    With autograd on (no_grad False) each block's act output is saved
    until the forward's output is dropped after the forward; under no_grad
    each is freed once the next block has used it. backward: a backward
    follows each forward and frees them (training). Returns the bytes of
    activations live at the peak that were kept for a backward that never
    came, less the newest of them: the peak is in the last block (its
    fc's output and its act's beside the others), whose act output is the
    newest and not counted."""
    sim.torch_info()
    for i in range(blocks):
        sim.alloc(4 * MiB, "parameters")
    sim.tick(1000)
    for step in range(1, steps + 1):
        sim.tick(5000)
        x = sim.alloc(act, "inputs")
        saved, prev = [], None
        sim.push("fwd:<MLP>")
        for i in range(blocks):
            sim.push("fwd:blocks.%d" % i)
            sim.push("fwd:blocks.%d.fc" % i)
            h = sim.alloc(act, "activations")
            sim.pop()
            if no_grad and prev is not None:
                sim.free(prev)
            sim.push("fwd:blocks.%d.act" % i)
            a = sim.alloc(act, "activations")
            sim.pop()
            sim.free(h)
            sim.pop()
            if no_grad:
                prev = a
            else:
                saved.append(a)
        sim.push("fwd:head")
        o = sim.alloc(out, "activations")
        sim.pop()
        sim.pop()
        if no_grad and prev is not None:
            sim.free(prev)
        if backward:
            sim.push("phase:backward")
            sim.bwd_start("head")
            for a in reversed(saved):
                sim.free(a, tid=AUTOGRAD)
            sim.bwd_end(AUTOGRAD)
            sim.pop()
            saved = []
        pred = sim.alloc(256 * 1024, "other")
        sim.free(o)
        for a in saved:
            sim.free(a)
        sim.free(x)
        sim.free(pred)
        sim.mark("step:%d" % step)
    return 0 if no_grad or backward else (blocks - 1) * act


def gpt_blocks(sim, steps=3, leak0=MiB, odd=None):
    """A GPT-2-like model's forward, 12 blocks in a ModuleList
    (<GPT2>.transformer.h.N.attn/mlp), activations freed after each step's
    forward; block 0 keeps leak0 bytes a step (a leak), block 5's mlp 4 KiB
    more (alike within the tolerance), block `odd`'s attn 200 KiB more (not
    alike)."""
    sim.torch_info()
    for step in range(1, steps + 1):
        sim.tick(20000)
        sim.push("fwd:<GPT2>")
        sim.push("fwd:transformer.wte")
        acts = [sim.alloc(8 * MiB, "activations")]
        sim.pop()
        for i in range(12):
            sim.push("fwd:transformer.h.%d.attn" % i)
            acts.append(sim.alloc(6 * MiB + (200 * 1024 if i == odd else 0), "activations"))
            if i == 0 and leak0:
                sim.alloc(leak0, "activations")
            sim.pop()
            sim.push("fwd:transformer.h.%d.mlp" % i)
            acts.append(sim.alloc(4 * MiB + (4 * 1024 if i == 5 else 0), "activations"))
            sim.pop()
        sim.pop()
        for a in acts:
            sim.free(a)
        sim.mark("step:%d" % step)


def scenario(name, outdir):
    exp = {"scenario": name}
    if name == "train":
        sim = Sim()
        train(sim, 6)
        sim.write(os.path.join(outdir, "train.json.gz"))
        exp["peak"] = expect_peak(sim)
    elif name == "teardown":
        # PyTorch frees the model's tensors at exit: still parameters
        sim = Sim()
        kept = train(sim, 6)
        sim.tick(5000)
        sim.free(kept["x"])
        for a in kept["params"].values():
            sim.free(a)
        sim.write(os.path.join(outdir, "teardown.json.gz"))
        exp["peak"] = expect_peak(sim)
    elif name == "leak":
        sim = Sim(total=4 * GiB)
        train(sim, 12, leak=3 * MiB)
        sim.write(os.path.join(outdir, "leak.json.gz"))
        last = sim.series[-1]
        exp["leak"] = {"rate": 3 * MiB, "last_total": last["total"],
                       "steps_until_full": (4 * GiB - last["total"]) // (3 * MiB),
                       "layer": "<Net>.fc2", "phase": "forward"}
        exp["peak"] = expect_peak(sim)
    elif name == "warmup":
        sim = Sim()
        train(sim, 12, warmup_growth=10 * MiB, grow_steps=5)
        sim.write(os.path.join(outdir, "warmup.json.gz"))
        exp["series"] = [s["live"] for s in sim.series]
    elif name == "oom":
        # activations fill the device: the failed request is fc2's
        sim = Sim(total=8 * GiB)
        train(sim, 4, oom_at=3, oom_request=3584 * MiB, act=(4 * GiB, 48 * MiB))
        o = sim.ooms[0]
        # an all-reduce running when the allocation failed
        sim.collective("AllReduce", o["t"] - 40, o["t"] - 20, 5000)
        sim.write(os.path.join(outdir, "oom.json.gz"), cut="flush")
        exp["oom"] = {"request": o["request"], "step": o["step"], "phase": o["phase"], "layer": o["layer"],
                      "free": o["free"], "allocated": o["fw"], "categories": cats_of(o["live"]),
                      "collectives": sim.collectives_at(o["t"])}
        exp["peak"] = expect_peak(sim)
    elif name == "native":
        # PyTorch's caching allocator: segments made in step 1, kept; a
        # cuBLAS workspace (not PyTorch's) never freed nor named; one
        # segment released by empty_cache() in step 2
        sim = Sim(mode="native", total=8 * GiB)
        sim.torch_info()
        segs = [sim.alloc(20 * MiB, "parameters")]
        sim.push("fwd:<Net>")
        sim.push("fwd:fc1")
        ws = sim.alloc(64 * MiB, "other", fw=True)
        segs.append(sim.alloc(40 * MiB, "activations"))
        spare = sim.alloc(2 * MiB, "activations")
        sim.pop()
        sim.pop()
        sim.mark("step:1")
        # what PyTorch counts inside its segments, when the hooks say it
        sim.mark('gpuprof:torch.memory {"allocated": %d, "reserved": %d}' % (30 * MiB, 62 * MiB))
        sim.free(spare)
        sim.mark("step:2")
        sim.mark('gpuprof:torch.memory {"allocated": %d, "reserved": %d}' % (10 * MiB, 60 * MiB))
        sim.name_segments()
        sim.write(os.path.join(outdir, "native.json.gz"))
        exp["reserved_peak"] = 20 * MiB + 40 * MiB + 2 * MiB
        exp["reserved_end"] = 60 * MiB
        exp["other"] = 64 * MiB
        exp["allocated_peak"], exp["allocated_end"], exp["worst_gap"] = 30 * MiB, 10 * MiB, 50 * MiB
        del ws
    elif name == "native_oom":
        # a failed cudaMalloc of PyTorch's allocator: it releases its cached
        # segments, retries, fails again; the program dies (no gpuprof.end)
        sim = Sim(mode="native", total=4 * GiB)
        sim.torch_info()
        sim.alloc(512 * MiB, "parameters")
        sim.push("fwd:<Net>")
        sim.push("fwd:fc1")
        cached = [sim.alloc(256 * MiB, "activations") for _ in range(4)]
        sim.oom(1536 * MiB)
        sim.free(cached[0])
        sim.free(cached[1])
        sim.oom(1536 * MiB)
        sim.write(os.path.join(outdir, "native_oom.json.gz"), cut="flush")
        exp["oom"] = {"request": 1536 * MiB, "released": 512 * MiB, "retries": 1}
    elif name == "hook":
        # native mode with the allocator hook and --stacks: the toy loop,
        # its parameters named after their modules, a cuBLAS workspace
        sim = HookSim(stacks=True, total=8 * GiB)
        kept = train(sim, 6)
        for layer, a in kept["params"].items():
            sim.name_tensor(a, "<Net>." + layer)
        sim.write(os.path.join(outdir, "hook.json.gz"))
        exp["peak"] = expect_peak(sim)
        exp["peak"]["reserved"] = sim.peak["reserved"]
        exp["peak"]["lines"] = {str(k): v for k, v in lines_of(sim.peak["live"]).items()}
        exp["reserved_peak"] = sim.reserved_peak
        exp["reserved_end"] = sim.reserved
        exp["allocated_end"] = sim.fw
        exp["other_peak"] = 8 * MiB
        exp["worst_gap"] = sim.frag_worst
    elif name == "hook_leak":
        sim = HookSim(stacks=True, total=4 * GiB)
        train(sim, 12, leak=3 * MiB + 100)
        sim.write(os.path.join(outdir, "hook_leak.json.gz"))
        exp["leak"] = {"rate": sim.rnd(3 * MiB + 100), "line": "train.py:42 in forward", "layer": "<Net>.fc2"}
    elif name == "hook_oom":
        # the failed request in fc2: one incident, PyTorch's, cut short
        sim = HookSim(total=8 * GiB)
        train(sim, 4, oom_at=3, oom_request=3584 * MiB + 1000, act=(4 * GiB, 48 * MiB))
        sim.write(os.path.join(outdir, "hook_oom.json.gz"), cut="flush")
        o = sim.ooms[0]
        exp["oom"] = {"request": o["request"], "block": o["block"], "step": o["step"], "phase": o["phase"],
                      "layer": o["layer"], "free": o["free"], "allocated": o["fw"], "reserved": o["reserved"],
                      "categories": cats_of(o["live"])}
    elif name == "nomodel":
        # a script with no nn.Module: plain tensors made, some freed, no
        # forward, no step; none of them is a parameter
        sim = HookSim(stacks=True, total=8 * GiB)
        sim.torch_info()
        big = sim.alloc(440 * MiB, "other")
        chunks = [sim.alloc(12 * MiB, "other") for _ in range(24)]
        for a in chunks[::2]:
            sim.free(a)
        sim.tick(1000)
        sim.alloc(2 * MiB, "other")
        sim.write(os.path.join(outdir, "nomodel.json.gz"))
        exp["peak"] = expect_peak(sim)
        del big
    elif name == "blocks":
        sim = Sim(total=16 * GiB)
        gpt_blocks(sim, odd=7)
        sim.write(os.path.join(outdir, "blocks.json.gz"))
        exp["peak"] = expect_peak(sim)
    elif name == "multi":
        # two processes on one GPU, clocks 0.5 s apart
        a = Sim(pid=5001, ts_base=1_700_000_000_000_000_000, total=8 * GiB)
        b = Sim(pid=5002, ts_base=1_700_000_000_500_000_000, total=8 * GiB)
        b.rank = 1  # torchrun's RANK in gpuprof.meta; a has none
        b.world_size, b.local_rank, b.local_world_size = 2, 1, 2
        b.job_start = 1_700_000_000_000_000_000
        a.t = 1_000_000.0
        xa = a.alloc(1 * GiB, "inputs")
        a.t = 3_000_000.0
        a.free(xa)
        b.t = 1_500_000.0  # = 2.0 s on a's clock
        xb = b.alloc(2 * GiB, "inputs")
        b.t = 3_500_000.0
        b.free(xb)
        a.write(os.path.join(outdir, "multi.json.gz"))
        b.write(os.path.join(outdir, "multi.5002.json.gz"))
        exp["together"] = 3 * GiB
        exp["together_t"] = 2.000002
    elif name == "ranks":
        # a run directory of a job of 4 ranks on 4 GPUs, 3 traced (rank 3
        # made no CUDA call): rank 1's activations are the largest, so it
        # has the least room left; ranks written as the recorder names them
        run = os.path.join(outdir, "ranks")
        os.makedirs(run, exist_ok=True)
        acts = {0: (96 * MiB, 48 * MiB), 1: (160 * MiB, 48 * MiB), 2: (112 * MiB, 48 * MiB)}
        exp["ranks"] = {}
        for rank, act in acts.items():
            pid = 7000 + rank
            sim = HookSim(stacks=True, total=8 * GiB, pid=pid, cmdline="python3 train.py",
                          uuid="GPU-%08x-1111-2222-3333-444444444444" % rank,
                          ts_base=1_700_000_000_000_000_000 + rank * 1000)
            sim.rank, sim.world_size, sim.local_rank, sim.local_world_size = rank, 4, rank, 4
            sim.job_start = 1_700_000_000_000_000_000
            kept = train(sim, 4, act=act)
            for layer, a in kept["params"].items():
                sim.name_tensor(a, "<Net>." + layer)
            # NCCL's kernels around each rank's peak P: rank 0 had just
            # finished an all-reduce; rank 1 is in an all-gather, with a
            # reduce-scatter launched before P queued behind it (the
            # all-gather's kernel is NCCL's generic one: its call's range
            # names it); rank 2 ran none. A kernel of PyTorch's across P is
            # no collective.
            P = sim.peak["t"]
            if rank == 0:
                sim.collective("AllReduce", P - 300, P - 290, 100)
                sim.collective("AllGather", P + 500, P + 510, 50)
            elif rank == 1:
                sim.collective("AllReduce", P - 900, P - 890, 100)
                sim.collective("AllGather", P - 200, P - 150, 400, call=True, generic=True)
                sim.collective("ReduceScatter", P - 50, P + 30, 100, stream=14)
                sim.collective("AllGather", P + 800, P + 810, 50)
            sim.kernel("void at::native::elementwise_kernel<128, 2>(int, float)", P - 100, 200)
            sim.write(os.path.join(run, "rank%d.%d.json.gz" % (rank, pid)))
            e = expect_peak(sim)
            e["collectives"] = sim.collectives_at(P)
            exp["ranks"][str(rank)] = {"peak": e["bytes"], "categories": e["categories"],
                                       "reserved_peak": sim.reserved_peak, "other_peak": e["other"],
                                       "capacity": 8 * GiB, "collectives": e["collectives"],
                                       "lines": {str(k): v for k, v in lines_of(sim.peak["live"]).items()}}
        exp["dir"] = run
    elif name == "many":
        # more GPUs and more processes on one GPU than a fixed table would
        # hold: GPU 0 shared by 33 processes, GPUs 1..16 by 2 each; every
        # process holds 1 MiB from 1 s to 3 s, so each GPU's peak is all of
        # its processes together
        paths = []
        shares = [33] + [2] * 16
        pid = 6000
        for gpu, nproc in enumerate(shares):
            for _ in range(nproc):
                pid += 1
                sim = Sim(mode="cuda", pid=pid, total=8 * GiB, cmdline="./app",
                          uuid="GPU-%08x-1111-2222-3333-444444444444" % gpu)
                sim.t = 1_000_000.0
                x = sim.alloc(1 * MiB, "other")
                sim.t = 3_000_000.0
                sim.free(x)
                path = os.path.join(outdir, "many.%d.json.gz" % pid)
                sim.write(path)
                paths.append(path)
        exp["paths"] = paths
        exp["shares"] = shares
    elif name == "cuda":
        # a plain CUDA program: nested NVTX ranges as layers, a request
        # larger than the device
        sim = Sim(mode="cuda", total=1 * GiB, cmdline="./app")
        sim.push("setup")
        sim.alloc(100 * MiB, "other")
        sim.pop()
        sim.push("solver")
        sim.push("iteration")
        sim.alloc(300 * MiB, "other")
        sim.pop()
        sim.alloc(50 * MiB, "other")
        sim.oom(2 * GiB)
        sim.pop()
        sim.write(os.path.join(outdir, "cuda.json.gz"))
        exp["peak"] = 450 * MiB
    elif name == "order":
        # the same run written in order, shuffled with watermarks, shuffled
        # without them (the fallback window), and with one record too late
        sim = Sim()
        train(sim, 10, step_gap=400000.0)
        sim.write(os.path.join(outdir, "order.sorted.json"), gz=False, shuffle=False)
        sim.write(os.path.join(outdir, "order.shuffled.json.gz"), seed=7)
        sim.write(os.path.join(outdir, "order.nowm.json.gz"), seed=8, watermarks=False)
        late = json.dumps({T.PH: "i", T.NAME: EV.ALLOC.name, T.CAT: CAT.MEMORY, T.PID: sim.gpu_pid, T.TID: 7,
                           T.TS: 1500.0, T.S: "t",
                           T.ARGS: {F.ADDR: "0x1000", F.BYTES: 4096, F.KIND: KIND.DEVICE, F.DEVICE: 0,
                                    F.STREAM: 7, F.CORR: 999999, F.ASYNC: True}}, separators=(",", ":"))
        sim.write(os.path.join(outdir, "order.late.json.gz"), seed=9, late=[late])
        exp["peak"] = expect_peak(sim)
    else:
        raise SystemExit("unknown scenario %s" % name)
    with open(os.path.join(outdir, name + ".expected.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    scenario(sys.argv[1], sys.argv[2])
