#!/usr/bin/env python3
"""Checks a gpuprof trace against what a sample program says it did.

Usage: check_trace.py TRACE SAMPLE_STDOUT_FILE [--allow-recovered]

TRACE is a gpuprof trace (exporters/TRACE_FORMAT.md, format 1: one gzip member
holding a JSON array, one event per line). SAMPLE_STDOUT_FILE is the stdout of
a program from samples/ run under `gpuprof --trace`. Exit status 0 = PASS,
1 = FAIL (2 = bad command line).

Sample expectation lines
========================
Only lines that start with `GPUPROF_` are read; every other line is for
people. A line is a tag and then `key=value` words separated by single
spaces; values never hold spaces (names are hex-encoded). Unknown keys are
ignored, so lines may grow.

  GPUPROF_BEGIN sample=NAME pid=PID format=1
      First line. PID is getpid() of the sample: the trace's gpuprof.meta
      args.pid must equal it.
  GPUPROF_ALLOC seq=N t_ms=T tid=TID device=D kind=KIND api=API addr=0xHEX bytes=B
                [async=1 pool=LABEL stream=LABEL stream_id=ID]
  GPUPROF_FREE  (same keys; bytes = the size that was allocated)
      One line per allocation / free the sample made, in a global order
      (seq): a free is logged just before the freeing call, an allocation
      just after the allocating call returned, under one lock, so for each
      address the seq order is the real order. KIND is the trace's memory
      kind (device, managed, pinned_host, ...). TID is gettid() of the
      calling thread. t_ms is milliseconds since the sample started
      (monotonic clock). async=1 marks a stream-ordered (pool) allocation or
      free; pool=default|custom names the pool, stream= names the sample's
      stream, stream_id= is cudaStreamGetId() (informational).
  GPUPROF_OOM t_ms=T tid=TID api=API bytes=B device=D result=R error=NAME free=F total=T
      A deliberate allocation failure: the trace must hold one `oom` event
      for it. free/total are cudaMemGetInfo() just before the call.
  GPUPROF_OP t_ms=T tid=TID op=memcpy dir=HtoD|DtoH|DtoD|HtoH bytes=B async=0|1 stream=LABEL
  GPUPROF_OP t_ms=T tid=TID op=memset bytes=B value=V async=0|1 stream=LABEL
  GPUPROF_OP t_ms=T tid=TID op=kernel name=NAME grid=X,Y,Z block=X,Y,Z stream=LABEL
      One line per copy, set and kernel launch the sample issued. stream=legacy
      is the legacy default stream.
  GPUPROF_NVTX thread=I tid=TID n=K op=OP ...
      One line per NVTX call, per thread in call order (n = 0, 1, ...):
        op=push name_hex=H [domain_hex=H] [category=C category_name_hex=H]
                [color=0xAARRGGBB] [payload=U]
        op=pop [domain_hex=H]
        op=start key=K name_hex=H [domain_hex=H] [color=..] id=RANGEID
        op=end key=K [domain_hex=H] id=RANGEID
        op=mark name_hex=H [domain_hex=H]
        op=alloc addr=0xHEX bytes=B   (a cudaMalloc made at this point)
      Names are the raw bytes in hex; the trace must hold them decoded as
      UTF-8 with each invalid byte replaced by U+FFFD (the samples only use
      lone invalid bytes, for which every sane decoder agrees). No domain_hex
      = the default domain.
  GPUPROF_EXPECT kind=KIND allocs=N frees=N alloc_bytes=B free_bytes=B live_end=B [t_ms=T]
  GPUPROF_EXPECT ops memcpy=N memcpy_bytes=B memset=N memset_bytes=B kernels=N
  GPUPROF_EXPECT oom count=N
  GPUPROF_EXPECT nvtx threads=N
      Summaries (the last line of each wins). They must agree with the
      detail lines (a sample self-check); the trace is checked against the
      detail lines.
  GPUPROF_EXPECT exit=normal|killed
      killed: the sample kills itself; the trace must then be a recovered
      one (--allow-recovered) and only the operations done more than 1.5 s
      before GPUPROF_KILL's t_ms are required (later ones may be missing,
      but if present must be right).
  GPUPROF_KILL t_ms=T signal=9
  GPUPROF_END sample=NAME
      Last line of a sample that exits normally (its output is incomplete
      without it).

What is compared
================
  gzip      one complete gzip member (a truncated one fails: the launcher or
            `gpuprof recover` must have repaired it), valid UTF-8.
  lines     "[", one JSON object per line, every event line but the last
            ending in ",", "]". No duplicate keys, no NaN/Infinity.
  events    every event: ph, name (a string), pid, tid, ts (a number with
            exactly three decimals); X: dur likewise; first event
            gpuprof.meta (format 1, pid = the sample's, gpu_pid_base =
            1000000000 + pid*100), last event gpuprof.end, each once.
  end       clean=true and recovered=false, or, with --allow-recovered,
            recovered=true (required when the sample says exit=killed).
  dropped   gpuprof.end dropped_cupti == 0 and dropped_host == 0, and no
            gpuprof.dropped events.
  memory    every alloc/free event is well formed (addr "0x..", bytes,
            kind, device, stream, corr, async) and sits on pid
            gpu_pid_base + device. For every address the sample printed, the
            trace's alloc/free events at that address, in ts order (stable),
            are exactly the sample's operations at that address in seq order
            (op, kind, bytes). Then per matched event: device; async flag;
            stream -1 and tid 0 for non-stream allocations, tid == stream for
            async ones, each sample stream label maps to one trace stream and
            different labels to different streams; async (pool) events carry
            pool and pool_type, and the custom pool's addresses differ from the
            default pool's; an API event (X, cat cuda_runtime/cuda_driver) with
            the same corr exists on the sample's calling thread.
  extras    alloc/free events at addresses the sample never printed (CUDA,
            CUPTI or module globals) are listed by kind with their API names.
            They are tolerated when their kind is device_static or
            managed_static, or is a kind the sample itself never allocates
            (e.g. runtime-internal memory); extras of a kind the sample uses
            fail (the sample printed every address of that kind).
  kinds     per kind the sample uses: number and bytes of allocs and frees.
  running   per kind the sample uses, the running sum of alloc - free bytes
            in ts order never goes negative and ends at live_end.
  counter   "GPU memory" counter events hold the five documented kinds, all
            non-negative numbers; per kind the sample uses, the final value
            (last event by ts, summed over GPUs) equals live_end.
  oom       one oom event per GPUPROF_OOM, none more: host pid, the sample's
            thread, bytes, device, api (a driver equivalent is accepted with
            a note), result, free <= total, total = the device's memory.
  ops       (samples that print GPUPROF_OP) the multiset of memcpy
            (direction, bytes), memset (bytes, value) and kernel (name,
            grid, block) events equals the sample's: counts and bytes per
            category. Operations unique in both get: stream label -> one
            trace stream consistently, an API event with the same corr on the
            issuing thread, the async flag for HtoD/DtoH copies, and for
            kernels a `launch` flow (s on the host thread, f on the stream).
  nvtx      per thread, the B/E events in ts order (stable) are exactly the
            sample's push/pop sequence: names (after JSON decoding),
            domain, category, color, payload; no B/E on other threads; marks
            match by (thread, name, domain); every start has one b event on
            the starting thread and one e with the same id on the ending
            thread, later; each cudaMalloc made inside a range has its API
            event inside that innermost range's B..E on that thread.

Output: one line per check (`CHECK name PASS|FAIL|SKIP: ...`), NOTE lines,
and a final line:
  RESULT <sample> PASS|FAIL expected_allocs=.. traced_allocs=.. expected_frees=..
         traced_frees=.. expected_bytes=.. traced_bytes=.. dropped=.. trace_bytes=..
(traced_* count the trace's events of the kinds the sample uses; bytes are
allocated bytes.)
"""

import argparse
import collections
import decimal
import os
import sys
import zlib

import json

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "exporters"))
from trace_format import CAT, COUNTER_KINDS, EV, F, FORMAT, KIND, KINDS, T  # noqa: E402  (the names of the trace)

KNOWN_KINDS = set(KINDS)
TOLERATED_EXTRA_KINDS = {KIND.DEVICE_STATIC, KIND.MANAGED_STATIC}
KNOWN_PH = set("BEXiICbenstfMPOND")
KILL_MARGIN_MS = 1500
GPU_PID_OFFSET = 1000000000
API_EQUIVALENTS = {
    "cudaMalloc": ("cuMemAlloc",),
    "cudaMallocAsync": ("cuMemAllocAsync", "cudaMallocAsync"),
    "cudaMallocFromPoolAsync": ("cuMemAllocFromPoolAsync", "cudaMallocFromPoolAsync"),
    "cudaMallocHost": ("cuMemAllocHost", "cuMemHostAlloc"),
    "cudaHostAlloc": ("cuMemHostAlloc",),
    "cudaMallocManaged": ("cuMemAllocManaged",),
    "cudaMallocPitch": ("cuMemAllocPitch",),
}
MAX_LIST = 8
# the driver calls that the API callbacks (--callbacks) name for a sample's
# call: the runtime's frees run cuMemFree_v2 / cuMemFreeHost / cuMemFreeAsync
CALLBACK_FREES = {"cudaFree": ("cuMemFree",), "cudaFreeHost": ("cuMemFreeHost",),
                  "cudaFreeAsync": ("cuMemFreeAsync",)}


def callback_apis(api):
    """API names accepted for an allocation or free recorded by the callbacks."""
    return (api,) + API_EQUIVALENTS.get(api, ()) + CALLBACK_FREES.get(api, ())


class Fatal(Exception):
    """The trace cannot be checked at all."""


# --------------------------------------------------------------------------
# report

class Report:
    def __init__(self, out=sys.stdout):
        self.out = out
        self.failed = []
        self.lines = []

    def emit(self, s):
        print(s, file=self.out)

    def check(self, name, ok, detail="", details=()):
        status = "PASS" if ok else "FAIL"
        self.emit("CHECK %s %s%s" % (name, status, (": " + detail) if detail else ""))
        for i, d in enumerate(details):
            if i == MAX_LIST:
                self.emit("    ... %d more" % (len(details) - MAX_LIST))
                break
            self.emit("    " + d)
        if not ok:
            self.failed.append(name)
        return ok

    def skip(self, name, detail):
        self.emit("CHECK %s SKIP: %s" % (name, detail))

    def note(self, s):
        self.emit("NOTE " + s)


# --------------------------------------------------------------------------
# sample output

class SampleError(Exception):
    pass


def _kv(words, lineno):
    d = {}
    for w in words:
        if "=" not in w:
            raise SampleError("line %d: word %r is not key=value" % (lineno, w))
        k, v = w.split("=", 1)
        d[k] = v
    return d


def _int(d, k, lineno, default=None):
    if k not in d:
        if default is not None:
            return default
        raise SampleError("line %d: missing %s=" % (lineno, k))
    try:
        return int(d[k], 0)
    except ValueError:
        raise SampleError("line %d: %s=%r is not a number" % (lineno, k, d[k]))


def _hexname(d, k, lineno):
    try:
        return bytes.fromhex(d[k]).decode("utf-8", "replace")
    except (KeyError, ValueError):
        raise SampleError("line %d: bad %s" % (lineno, k))


class MemOp:
    __slots__ = ("seq", "op", "kind", "api", "addr", "bytes", "tid", "t_ms", "device",
                 "is_async", "pool", "stream", "stream_id", "required", "lineno")

    def __str__(self):
        return "%s seq=%d kind=%s api=%s addr=0x%x bytes=%d tid=%d t_ms=%d" % (
            self.op, self.seq, self.kind, self.api, self.addr, self.bytes, self.tid, self.t_ms)


class Sample:
    def __init__(self):
        self.name = None
        self.pid = None
        self.mem = []
        self.ooms = []
        self.ops = []
        self.nvtx = collections.defaultdict(list)   # thread index -> [dict]
        self.nvtx_tid = {}
        self.kind_summary = {}
        self.ops_summary = None
        self.oom_summary = None
        self.nvtx_summary = None
        self.exit = None
        self.kill_t_ms = None
        self.ended = False

    @property
    def kinds(self):
        return sorted({m.kind for m in self.mem})


def parse_sample(path):
    s = Sample()
    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8", "replace")
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.startswith("GPUPROF_"):
            continue
        words = [w for w in line.split(" ") if w]
        tag, rest = words[0], words[1:]
        subject = None
        if tag == "GPUPROF_EXPECT" and rest and "=" not in rest[0]:
            subject, rest = rest[0], rest[1:]     # "GPUPROF_EXPECT ops memcpy=..."
        d = _kv(rest, lineno)
        if tag == "GPUPROF_BEGIN":
            s.name = d.get("sample")
            s.pid = _int(d, "pid", lineno)
        elif tag in ("GPUPROF_ALLOC", "GPUPROF_FREE"):
            m = MemOp()
            m.op = "alloc" if tag == "GPUPROF_ALLOC" else "free"
            m.seq = _int(d, "seq", lineno)
            m.t_ms = _int(d, "t_ms", lineno, 0)
            m.tid = _int(d, "tid", lineno)
            m.device = _int(d, "device", lineno, 0)
            m.kind = d.get("kind", "")
            if m.kind not in KNOWN_KINDS:
                raise SampleError("line %d: unknown kind %r" % (lineno, m.kind))
            m.api = d.get("api", "?")
            m.addr = _int(d, "addr", lineno)
            m.bytes = _int(d, "bytes", lineno)
            m.is_async = d.get("async") == "1"
            m.pool = d.get("pool")
            m.stream = d.get("stream")
            m.stream_id = d.get("stream_id")
            m.required = True
            m.lineno = lineno
            s.mem.append(m)
        elif tag == "GPUPROF_OOM":
            s.ooms.append({
                "tid": _int(d, "tid", lineno), "api": d.get("api", "?"),
                "bytes": _int(d, "bytes", lineno), "device": _int(d, "device", lineno, 0),
                "result": _int(d, "result", lineno), "error": d.get("error"),
                "free": _int(d, "free", lineno, -1), "total": _int(d, "total", lineno, -1),
                "t_ms": _int(d, "t_ms", lineno, 0), "lineno": lineno})
        elif tag == "GPUPROF_OP":
            op = d.get("op")
            o = {"op": op, "tid": _int(d, "tid", lineno), "stream": d.get("stream", "?"),
                 "t_ms": _int(d, "t_ms", lineno, 0), "lineno": lineno}
            if op == "memcpy":
                o["key"] = ("memcpy", d.get("dir", "?"), _int(d, "bytes", lineno))
                o["async"] = d.get("async") == "1"
            elif op == "memset":
                o["key"] = ("memset", _int(d, "bytes", lineno), _int(d, "value", lineno, 0))
                o["async"] = d.get("async") == "1"
            elif op == "kernel":
                try:
                    g = tuple(int(x) for x in d["grid"].split(","))
                    b = tuple(int(x) for x in d["block"].split(","))
                except (KeyError, ValueError):
                    raise SampleError("line %d: bad grid/block" % lineno)
                o["key"] = ("kernel", d.get("name", "?"), g, b)
            else:
                raise SampleError("line %d: unknown op %r" % (lineno, op))
            s.ops.append(o)
        elif tag == "GPUPROF_NVTX":
            th = _int(d, "thread", lineno)
            tid = _int(d, "tid", lineno)
            if s.nvtx_tid.setdefault(th, tid) != tid:
                raise SampleError("line %d: thread %d has two tids" % (lineno, th))
            o = {"op": d.get("op"), "n": _int(d, "n", lineno), "lineno": lineno}
            if "name_hex" in d:
                o["name"] = _hexname(d, "name_hex", lineno)
            o["domain"] = _hexname(d, "domain_hex", lineno) if "domain_hex" in d else None
            for k in ("category", "color", "payload"):
                if k in d:
                    o[k] = _int(d, k, lineno)
            if "category_name_hex" in d:
                o["category_name"] = _hexname(d, "category_name_hex", lineno)
            for k in ("key",):
                if k in d:
                    o[k] = d[k]
            if o["op"] == "alloc":
                o["addr"] = _int(d, "addr", lineno)
                o["bytes"] = _int(d, "bytes", lineno)
            if o["op"] not in ("push", "pop", "start", "end", "mark", "alloc"):
                raise SampleError("line %d: unknown NVTX op %r" % (lineno, o["op"]))
            if o["op"] in ("push", "start", "mark") and "name" not in o:
                raise SampleError("line %d: NVTX %s without name_hex" % (lineno, o["op"]))
            if o["op"] in ("start", "end") and "key" not in o:
                raise SampleError("line %d: NVTX %s without key" % (lineno, o["op"]))
            s.nvtx[th].append(o)
        elif tag == "GPUPROF_EXPECT":
            if "kind" in d:
                s.kind_summary[d["kind"]] = {k: _int(d, k, lineno) for k in
                                             ("allocs", "frees", "alloc_bytes", "free_bytes",
                                              "live_end")}
            elif subject == "ops":
                s.ops_summary = {k: _int(d, k, lineno) for k in
                                 ("memcpy", "memcpy_bytes", "memset", "memset_bytes", "kernels")}
            elif subject == "oom":
                s.oom_summary = _int(d, "count", lineno)
            elif subject == "nvtx":
                s.nvtx_summary = _int(d, "threads", lineno)
            elif "exit" in d:
                if d["exit"] not in ("normal", "killed"):
                    raise SampleError("line %d: exit=%s" % (lineno, d["exit"]))
                s.exit = d["exit"]
        elif tag == "GPUPROF_KILL":
            s.kill_t_ms = _int(d, "t_ms", lineno)
        elif tag == "GPUPROF_END":
            s.ended = True
    for th in s.nvtx:
        s.nvtx[th].sort(key=lambda o: o["n"])
    s.mem.sort(key=lambda m: m.seq)
    if s.kill_t_ms is not None:
        for m in s.mem:
            m.required = m.t_ms <= s.kill_t_ms - KILL_MARGIN_MS
    return s


# --------------------------------------------------------------------------
# trace

class Ev(dict):
    """An event (the decoded JSON object) plus its file position and ts in ns."""
    idx = 0
    ts_ns = 0

    @property
    def args(self):
        a = self.get(T.ARGS)
        return a if isinstance(a, dict) else {}


class TraceInfo:
    def __init__(self):
        self.size = 0
        self.events = []
        self.problems = []    # (check, message)


def _no_dupes(pairs):
    d = Ev()
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate key %r" % k)
        d[k] = v
    return d


def _no_constant(name):
    raise ValueError("%s is not JSON" % name)


def _three_decimals(v):
    return isinstance(v, decimal.Decimal) and v.is_finite() and v.as_tuple().exponent == -3


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def load_trace(path, rep):
    """Reads and validates the file; returns TraceInfo or raises Fatal."""
    info = TraceInfo()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        rep.check("gzip", False, "cannot read %s: %s" % (path, e))
        raise Fatal()
    info.size = len(data)
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data)
    except zlib.error as e:
        rep.check("gzip", False, "not a valid gzip stream: %s" % e)
        raise Fatal()
    if not d.eof:
        try:
            out += d.flush()
        except zlib.error:
            pass
        rep.check("gzip", False,
                  "gzip stream is TRUNCATED (no trailer; %d bytes decompress): the trace was "
                  "not closed and was not recovered (gpuprof recover repairs it)" % len(out))
        raise Fatal()
    if d.unused_data:
        rep.check("gzip", False, "%d bytes after the gzip member (format: one member)"
                  % len(d.unused_data))
        raise Fatal()
    rep.check("gzip", True, "%d bytes compressed, %d decompressed" % (len(data), len(out)))
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        rep.check("utf8", False, "trace is not valid UTF-8 at byte %d: %r"
                  % (e.start, out[max(0, e.start - 40):e.start + 10]))
        raise Fatal()
    lines = text.split("\n")
    if len(lines) < 3 or lines[0] != "[" or lines[-1] != "" or lines[-2] != "]":
        rep.check("lines", False, "file is not '[\\n' events '\\n]\\n' (starts %r, ends %r)"
                  % (text[:20], text[-20:]))
        raise Fatal()
    body = lines[1:-2]
    errs = []
    for i, line in enumerate(body):
        last = i == len(body) - 1
        if last:
            if line.endswith(","):
                errs.append("line %d: last event ends with ','" % (i + 2))
        else:
            if not line.endswith(","):
                errs.append("line %d: event does not end with ',' (one event per line)" % (i + 2))
                continue
            line = line[:-1]
        try:
            ev = json.loads(line, object_pairs_hook=_no_dupes,
                            parse_float=decimal.Decimal, parse_constant=_no_constant)
        except ValueError as e:
            errs.append("line %d: %s: %r" % (i + 2, e, line[:120]))
            continue
        if not isinstance(ev, Ev):
            errs.append("line %d: not an object" % (i + 2))
            continue
        ev.idx = i
        info.events.append(ev)
    rep.check("lines", not errs, "%d event lines" % len(body), errs)
    if errs:
        raise Fatal()

    # per-event structure
    errs = []
    for ev in info.events:
        where = "event %d (%s %r)" % (ev.idx, ev.get(T.PH), ev.get(T.NAME))
        ph = ev.get(T.PH)
        if not isinstance(ph, str) or ph not in KNOWN_PH:
            errs.append("%s: bad ph" % where)
            continue
        if not isinstance(ev.get(T.NAME), str) and not (ph == "E" and T.NAME not in ev):
            errs.append("%s: name missing or not a string" % where)
        for k in (T.PID, T.TID):
            if not _is_int(ev.get(k)):
                errs.append("%s: %s missing or not an integer" % (where, k))
        ts = ev.get(T.TS)
        if not _three_decimals(ts):
            errs.append("%s: ts %r is not a number with exactly three decimals" % (where, ts))
        else:
            ev.ts_ns = int(ts * 1000)
        if ph == "X":
            dur = ev.get(T.DUR)
            if not _three_decimals(dur) or dur < 0:
                errs.append("%s: dur %r is not a non-negative number with three decimals"
                            % (where, dur))
        if ph in ("i", "I") and ev.get(T.S, "t") not in ("g", "p", "t"):
            errs.append("%s: bad scope s=%r" % (where, ev.get(T.S)))
        if T.ARGS in ev and not isinstance(ev[T.ARGS], dict):
            errs.append("%s: args is not an object" % where)
        if T.CAT in ev and not isinstance(ev[T.CAT], str):
            errs.append("%s: cat is not a string" % where)
        if ph in ("b", "e", "n", "s", "t", "f") and T.ID not in ev:
            errs.append("%s: no id" % where)
    rep.check("events", not errs, "%d events" % len(info.events), errs)
    return info


def _id(v):
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            return v
    return v


def _hexaddr(v):
    if isinstance(v, str) and v.startswith("0x"):
        try:
            return int(v, 16)
        except ValueError:
            return None
    return None


def _fmt_ts(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


# --------------------------------------------------------------------------
# the checks

class Checker:
    def __init__(self, sample, info, allow_recovered, rep, callbacks=False):
        self.s = sample
        self.info = info
        self.ev = info.events
        self.allow_recovered = allow_recovered
        # recorded without pool records: every allocation and free comes
        # from the API callbacks or a patched call (stream-ordered ones in
        # tensor mode), says its thread and API, has no pool args
        self.callbacks = callbacks
        self.rep = rep
        self.meta = None
        self.end = None
        self.host_pid = None
        self.gpu_base = None
        self.devices = {}
        self.api_by_corr = collections.defaultdict(list)
        self.matched = []           # (MemOp, Ev)
        self.stats = {"traced_allocs": 0, "traced_frees": 0, "traced_bytes": 0,
                      "dropped": "?"}
        self.killed = sample.exit == "killed"

    def sorted_ts(self, evs):
        return sorted(evs, key=lambda e: (e.ts_ns, e.idx))

    # -- framing: meta, end, pids, dropped -------------------------------
    def check_frame(self):
        rep, evs = self.rep, self.ev
        if not evs:
            rep.check("meta", False, "no events")
            raise Fatal()
        first, last = evs[0], evs[-1]
        metas = [e for e in evs if e.get(T.NAME) == EV.META.name]
        ends = [e for e in evs if e.get(T.NAME) == EV.END.name]
        a = first.args
        errs = []
        if first.get(T.NAME) != EV.META.name or first.get(T.PH) != "i":
            errs.append("first event is %r, not gpuprof.meta" % first.get(T.NAME))
        if len(metas) != 1:
            errs.append("%d gpuprof.meta events" % len(metas))
        if a.get(F.FORMAT) != FORMAT:
            errs.append("format %r != %d" % (a.get(F.FORMAT), FORMAT))
        for k in (F.PID, F.TS_BASE_NS, F.GPU_PID_BASE):
            if not _is_int(a.get(k)):
                errs.append("args.%s missing or not an integer" % k)
        if a.get(F.CLOCK) != "cupti":
            errs.append("clock %r != 'cupti'" % a.get(F.CLOCK))
        self.host_pid = a.get(F.PID)
        self.gpu_base = a.get(F.GPU_PID_BASE)
        if _is_int(self.host_pid) and self.gpu_base != GPU_PID_OFFSET + self.host_pid * 100:
            errs.append("gpu_pid_base %r != 1000000000 + pid*100" % self.gpu_base)
        if self.s.pid is not None and self.host_pid != self.s.pid:
            errs.append("meta pid %r is not the sample's pid %d" % (self.host_pid, self.s.pid))
        if first.get(T.PID) != self.host_pid:
            errs.append("gpuprof.meta is not on the host pid")
        rep.check("meta", not errs, "pid %r, gpu_pid_base %r, version %r" %
                  (self.host_pid, self.gpu_base, a.get(F.VERSION)), errs)
        if errs and (not _is_int(self.host_pid) or not _is_int(self.gpu_base)):
            raise Fatal()

        for e in evs:
            if e.get(T.NAME) == EV.DEVICE.name:
                da = e.args
                self.devices[da.get(F.DEVICE)] = da
                if e.get(T.PID) != self.gpu_base + (da.get(F.DEVICE) or 0):
                    rep.note("gpuprof.device %r is on pid %r" % (da.get(F.DEVICE), e.get(T.PID)))
        rep.check("devices", 0 in self.devices, "devices %s" % sorted(
            "%s:%s" % (k, v.get(F.NAME)) for k, v in self.devices.items()))

        # end
        errs = []
        if last.get(T.NAME) != EV.END.name or last.get(T.PH) != "i":
            errs.append("last event is %r, not gpuprof.end" % last.get(T.NAME))
        if len(ends) != 1:
            errs.append("%d gpuprof.end events" % len(ends))
        self.end = last if last.get(T.NAME) == EV.END.name else (ends[0] if ends else Ev())
        ea = self.end.args
        clean, recovered = ea.get(F.CLEAN), ea.get(F.RECOVERED)
        if not isinstance(recovered, bool) or not isinstance(clean, bool):
            errs.append("clean %r / recovered %r are not booleans" % (clean, recovered))
        if self.killed:
            if recovered is not True:
                errs.append("the sample was killed, but the trace is not a recovered one "
                            "(recovered=%r)" % recovered)
            elif not self.allow_recovered:
                errs.append("recovered trace, and --allow-recovered was not given")
            if clean is True:
                errs.append("the sample was killed, but gpuprof.end says clean=true")
        else:
            if recovered is True and not self.allow_recovered:
                errs.append("the trace was recovered (the process did not end normally); "
                            "--allow-recovered was not given")
            if recovered is not True and clean is not True:
                errs.append("clean=%r: the process did not end normally" % clean)
        rep.check("end", not errs, "clean=%r recovered=%r events=%r records=%r "
                  "late_memory_records=%r" % (clean, recovered, ea.get(F.EVENTS),
                                              ea.get(F.RECORDS),
                                              ea.get(F.LATE_MEMORY_RECORDS)), errs)

        # dropped
        errs = []
        dropped = 0
        for k in (F.DROPPED_CUPTI, F.DROPPED_HOST):
            v = ea.get(k)
            if v is None and recovered is True:
                rep.note("recovered gpuprof.end has no %s (unknown after a crash)" % k)
            elif not _is_int(v):
                errs.append("%s = %r (missing or not an integer)" % (k, v))
            else:
                dropped += v
                if v != 0:
                    errs.append("%s = %d" % (k, v))
        for e in evs:
            if e.get(T.NAME) == EV.DROPPED.name:
                errs.append("gpuprof.dropped at ts %s: what=%r count=%r" % (
                    e.get(T.TS), e.args.get(F.WHAT), e.args.get(F.COUNT)))
                c = e.args.get(F.COUNT)
                if _is_int(c) and recovered is True and ea.get(F.DROPPED_CUPTI) is None:
                    dropped += c
        self.stats["dropped"] = dropped
        # CUPTI's memory records of what the callbacks recorded: not a fault
        # of the trace (they are skipped), but each cost the program
        self.stats["skipped"] = ea.get(F.SKIPPED_MEMORY_RECORDS)
        rep.check("dropped", not errs, "dropped_cupti=%r dropped_host=%r" % (
            ea.get(F.DROPPED_CUPTI), ea.get(F.DROPPED_HOST)), errs)

        # pids of the host-side events; API index
        errs = []
        for e in evs:
            cat = e.get(T.CAT)
            if e.get(T.PH) == "X" and cat in (CAT.CUDA_RUNTIME, CAT.CUDA_DRIVER):
                if e.get(T.PID) != self.host_pid:
                    errs.append("API event %r on pid %r" % (e.get(T.NAME), e.get(T.PID)))
                c = e.args.get(F.CORR)
                if _is_int(c):
                    self.api_by_corr[c].append(e)
                else:
                    errs.append("API event %r at %s without integer corr" % (
                        e.get(T.NAME), e.get(T.TS)))
            elif cat == CAT.NVTX and e.get(T.PID) != self.host_pid:
                errs.append("NVTX event %r on pid %r" % (e.get(T.NAME), e.get(T.PID)))
        rep.check("host_events", not errs, "%d API events" % sum(
            len(v) for v in self.api_by_corr.values()), errs)

    # -- memory ------------------------------------------------------------
    def check_memory(self):
        rep, s = self.rep, self.s
        mem_evs = [e for e in self.ev if e.get(T.NAME) in (EV.ALLOC.name, EV.FREE.name)
                   and e.get(T.CAT) == CAT.MEMORY]
        errs = []
        good = []
        for e in mem_evs:
            a = e.args
            addr = _hexaddr(a.get(F.ADDR))
            w = "%s at ts %s" % (e.get(T.NAME), e.get(T.TS))
            bad = []
            if e.get(T.PH) != "i":
                bad.append("ph %r" % e.get(T.PH))
            if addr is None:
                bad.append("addr %r is not a \"0x...\" string" % a.get(F.ADDR))
            if not _is_int(a.get(F.BYTES)) or a.get(F.BYTES) < 0:
                bad.append("bytes %r" % a.get(F.BYTES))
            if a.get(F.KIND) not in KNOWN_KINDS:
                bad.append("kind %r" % a.get(F.KIND))
            for k in (F.DEVICE, F.STREAM, F.CORR):
                if not _is_int(a.get(k)):
                    bad.append("%s %r" % (k, a.get(k)))
            if not isinstance(a.get(F.ASYNC), bool):
                bad.append("async %r" % a.get(F.ASYNC))
            if _is_int(a.get(F.DEVICE)) and e.get(T.PID) != self.gpu_base + a[F.DEVICE]:
                bad.append("pid %r is not gpu_pid_base + device %d" % (e.get(T.PID), a[F.DEVICE]))
            if bad:
                errs.append("%s: %s" % (w, ", ".join(bad)))
                continue
            e.addr = addr
            good.append(e)
        rep.check("memory_events", not errs, "%d alloc/free events" % len(mem_evs), errs)

        kinds_used = set(s.kinds)
        by_addr_trace = collections.defaultdict(list)
        for e in self.sorted_ts(good):
            by_addr_trace[e.addr].append(e)
        by_addr_sample = collections.defaultdict(list)
        for m in s.mem:
            by_addr_sample[m.addr].append(m)

        # summaries vs detail lines (sample self-check)
        errs = []
        for k in kinds_used | set(s.kind_summary):
            ops = [m for m in s.mem if m.kind == k]
            al = [m for m in ops if m.op == "alloc"]
            fr = [m for m in ops if m.op == "free"]
            mine = {"allocs": len(al), "frees": len(fr),
                    "alloc_bytes": sum(m.bytes for m in al),
                    "free_bytes": sum(m.bytes for m in fr)}
            mine["live_end"] = mine["alloc_bytes"] - mine["free_bytes"]
            if s.kind_summary.get(k) != mine:
                errs.append("kind %s: summary %r, detail lines %r" % (k, s.kind_summary.get(k),
                                                                      mine))
        rep.check("sample_summary", not errs, "kinds %s" % ",".join(sorted(kinds_used)), errs)

        # address-by-address
        miss, wrong, extra_on_sample = [], [], []
        optional_missing = 0
        extras = []
        for addr in sorted(set(by_addr_trace) | set(by_addr_sample)):
            exp = by_addr_sample.get(addr, [])
            got = by_addr_trace.get(addr, [])
            if not exp:
                extras.extend(got)
                continue
            # runtime-internal static memory may land on a freed sample address
            got2 = []
            for e in got:
                if e.args[F.KIND] in TOLERATED_EXTRA_KINDS and e.args[F.KIND] not in kinds_used:
                    extras.append(e)
                else:
                    got2.append(e)
            got = got2
            k = 0
            bad = False
            while k < len(exp) and k < len(got):
                m, e = exp[k], got[k]
                a = e.args
                if e.get(T.NAME) != m.op or a[F.KIND] != m.kind or a[F.BYTES] != m.bytes:
                    wrong.append("0x%x: sample %s; trace has %s kind=%s bytes=%d at ts %s "
                                 "(op #%d at this address)" % (addr, m, e.get(T.NAME), a[F.KIND],
                                                               a[F.BYTES], e.get(T.TS), k + 1))
                    bad = True
                    break
                self.matched.append((m, e))
                k += 1
            if bad:
                continue
            for m in exp[k:]:
                if m.required:
                    miss.append("0x%x: %s is not in the trace" % (addr, m))
                else:
                    optional_missing += 1
            for e in got[k:]:
                extra_on_sample.append("0x%x: trace has one more %s kind=%s bytes=%d at ts %s "
                                       "than the sample made there" % (
                                           addr, e.get(T.NAME), e.args[F.KIND], e.args[F.BYTES],
                                           e.get(T.TS)))
        n_req = sum(1 for m in s.mem if m.required)
        rep.check("addresses", not (miss or wrong or extra_on_sample),
                  "%d of %d sample operations matched by address (%d required), %d missing, "
                  "%d wrong, %d unexpected at sample addresses" % (
                      len(self.matched), len(s.mem), n_req, len(miss), len(wrong),
                      len(extra_on_sample)),
                  wrong + miss + extra_on_sample)
        if optional_missing:
            rep.note("%d operations done less than %d ms before the kill are not in the trace "
                     "(allowed)" % (optional_missing, KILL_MARGIN_MS))

        # extras
        by_kind = collections.OrderedDict()
        for e in extras:
            k = e.args[F.KIND]
            st = by_kind.setdefault(k, {"allocs": 0, "frees": 0, "alloc_bytes": 0,
                                        "free_bytes": 0, "apis": collections.Counter()})
            if e.get(T.NAME) == EV.ALLOC.name:
                st["allocs"] += 1
                st["alloc_bytes"] += e.args[F.BYTES]
            else:
                st["frees"] += 1
                st["free_bytes"] += e.args[F.BYTES]
            apis = self.api_by_corr.get(e.args[F.CORR], [])
            st["apis"][",".join(sorted({x.get(T.NAME) for x in apis})) or "no API event"] += 1
        errs, lines = [], []
        for k, st in by_kind.items():
            tolerated = k in TOLERATED_EXTRA_KINDS or k not in kinds_used
            line = ("kind=%s allocs=%d (%d bytes) frees=%d (%d bytes) from %s: %s" % (
                k, st["allocs"], st["alloc_bytes"], st["frees"], st["free_bytes"],
                dict(st["apis"]),
                "tolerated (%s)" % ("static/module memory" if k in TOLERATED_EXTRA_KINDS
                                    else "a kind the sample never allocates")
                if tolerated else "NOT tolerated: the sample printed every %s address" % k))
            lines.append(line)
            if not tolerated:
                errs.append(line)
        rep.check("extras", not errs, "%d alloc/free events the sample did not make" %
                  len(extras), lines)

        # per-matched-event attributes
        errs = []
        notes = []
        stream_map = collections.defaultdict(set)
        pool_map = collections.defaultdict(set)
        api_name_mismatch = collections.Counter()
        for m, e in self.matched:
            a = e.args
            w = "0x%x %s seq=%d" % (m.addr, m.op, m.seq)
            if m.kind != "pinned_host" and a[F.DEVICE] != m.device:
                errs.append("%s: device %r != %d" % (w, a[F.DEVICE], m.device))
            if a[F.ASYNC] != m.is_async:
                errs.append("%s: async %r, the sample's call was %s" % (
                    w, a[F.ASYNC], "stream-ordered" if m.is_async else "not stream-ordered"))
            if m.is_async:
                if e.get(T.TID) != a[F.STREAM]:
                    errs.append("%s: tid %r != stream %r" % (w, e.get(T.TID), a[F.STREAM]))
                if a[F.STREAM] < 0:
                    errs.append("%s: stream-ordered but stream %r" % (w, a[F.STREAM]))
                stream_map[m.stream].add(a[F.STREAM])
                if m.op == "alloc" and not self.callbacks:
                    if _hexaddr(a.get(F.POOL)) is None or not isinstance(a.get(F.POOL_TYPE), str):
                        errs.append("%s: pool %r / pool_type %r missing" % (
                            w, a.get(F.POOL), a.get(F.POOL_TYPE)))
                    else:
                        pool_map[m.pool].add(_hexaddr(a.get(F.POOL)))
            else:
                if a[F.STREAM] != -1 or e.get(T.TID) != 0:
                    errs.append("%s: stream %r tid %r, expected -1 and 0 (no stream)" % (
                        w, a[F.STREAM], e.get(T.TID)))
            if self.callbacks:
                # the event says its thread and API (the driver call's, or the
                # runtime call's when recorded in the patched call); its corr
                # is the driver call's, which no API event has, or 0
                if a.get(F.THREAD) != m.tid:
                    errs.append("%s: thread %r, the sample called from tid %d" % (
                        w, a.get(F.THREAD), m.tid))
                if not isinstance(a.get(F.API), str) or not any(
                        a[F.API].startswith(p) for p in callback_apis(m.api)):
                    errs.append("%s: api %r for the sample's %s" % (w, a.get(F.API), m.api))
                if F.POOL in a:
                    errs.append("%s: pool args without pool records" % w)
                continue
            apis = self.api_by_corr.get(a[F.CORR], [])
            if not apis:
                errs.append("%s: no API event with corr %d" % (w, a[F.CORR]))
            elif not any(x.get(T.TID) == m.tid for x in apis):
                errs.append("%s: API event(s) %s with corr %d are on tid %s, the sample called "
                            "from tid %d" % (w, [x.get(T.NAME) for x in apis], a[F.CORR],
                                             sorted({x.get(T.TID) for x in apis}), m.tid))
            elif not any(x.get(T.NAME) == m.api for x in apis):
                api_name_mismatch[(m.api, ",".join(sorted({x.get(T.NAME) for x in apis})))] += 1
        labels = {}
        for label, ids in stream_map.items():
            if len(ids) != 1:
                errs.append("sample stream %s appears as trace streams %s" % (label, sorted(ids)))
            for i in ids:
                if i in labels and labels[i] != label:
                    errs.append("trace stream %d holds sample streams %s and %s" % (
                        i, labels[i], label))
                labels[i] = label
        if stream_map:
            sid = {m.stream: m.stream_id for m, _ in self.matched if m.is_async}
            notes.append("streams: %s" % ", ".join(
                "%s -> %s (cudaStreamGetId %s)" % (k, sorted(v), sid.get(k))
                for k, v in sorted(stream_map.items())))
        if "custom" in pool_map and "default" in pool_map and \
                pool_map["custom"] & pool_map["default"]:
            errs.append("custom pool and default pool share pool address(es) %s" % sorted(
                hex(x) for x in pool_map["custom"] & pool_map["default"]))
        if pool_map:
            notes.append("pools: %s" % ", ".join("%s -> %s" % (k, sorted(hex(x) for x in v))
                                                 for k, v in sorted(pool_map.items())))
        for (api, names), n in api_name_mismatch.items():
            notes.append("%d %s calls are traced as API %s" % (n, api, names))
        rep.check("attribution", not errs, "%d matched events: device, async, stream, pool, "
                  "corr -> API event on the calling thread" % len(self.matched), errs)
        for n in notes:
            rep.note(n)

        # per-kind totals
        errs, lines = [], []
        present = [e for e in good if e.args[F.KIND] in kinds_used]
        self.stats["traced_allocs"] = sum(1 for e in present if e.get(T.NAME) == EV.ALLOC.name)
        self.stats["traced_frees"] = sum(1 for e in present if e.get(T.NAME) == EV.FREE.name)
        self.stats["traced_bytes"] = sum(e.args[F.BYTES] for e in present
                                         if e.get(T.NAME) == EV.ALLOC.name)
        for k in sorted(kinds_used):
            def tally(ops, key):
                r = {"alloc": [0, 0], "free": [0, 0]}
                for o in ops:
                    t = r[key(o)[0]]
                    t[0] += 1
                    t[1] += key(o)[1]
                return r
            ex = tally([m for m in s.mem if m.kind == k], lambda m: (m.op, m.bytes))
            req = tally([m for m in s.mem if m.kind == k and m.required],
                        lambda m: (m.op, m.bytes))
            tr = tally([e for e in present if e.args[F.KIND] == k],
                       lambda e: (e.get(T.NAME), e.args[F.BYTES]))
            line = ("kind=%s allocs %d/%d (%d/%d bytes) frees %d/%d (%d/%d bytes) "
                    "[traced/expected]" % (k, tr["alloc"][0], ex["alloc"][0], tr["alloc"][1],
                                           ex["alloc"][1], tr["free"][0], ex["free"][0],
                                           tr["free"][1], ex["free"][1]))
            lines.append(line)
            for op in ("alloc", "free"):
                if self.killed:
                    ok = req[op][0] <= tr[op][0] <= ex[op][0]
                else:
                    ok = tr[op] == ex[op]
                if not ok:
                    errs.append(line)
                    break
        rep.check("kinds", not errs, "; ".join(lines))

        # running sum per kind
        errs = []
        self.live_traced = {}
        for k in sorted(kinds_used):
            run, low, low_at = 0, 0, None
            for e in self.sorted_ts([e for e in present if e.args[F.KIND] == k]):
                run += e.args[F.BYTES] if e.get(T.NAME) == EV.ALLOC.name else -e.args[F.BYTES]
                if run < low:
                    low, low_at = run, e
            self.live_traced[k] = run
            exp_live = self.expected_live(k)
            if low < 0:
                errs.append("kind %s: running sum goes negative (%d) at ts %s (free of %s)" % (
                    k, low, low_at.get(T.TS), low_at.args.get(F.ADDR)))
            if run != exp_live:
                errs.append("kind %s: running sum ends at %d, live_end is %d" % (k, run, exp_live))
        rep.check("running_sum", not errs, ", ".join(
            "%s ends %d" % (k, v) for k, v in sorted(self.live_traced.items())), errs)

    def expected_live(self, kind):
        """live_end of the sample; for a killed sample, of the operations in the trace."""
        ops = [m for m in self.s.mem if m.kind == kind]
        if self.killed:
            got = {id(m) for m, _ in self.matched}
            ops = [m for m in ops if id(m) in got]
        return sum(m.bytes if m.op == "alloc" else -m.bytes for m in ops)

    # -- counter -----------------------------------------------------------
    def check_counter(self):
        rep = self.rep
        cs = [e for e in self.ev if e.get(T.PH) == "C" and e.get(T.NAME) == EV.GPU_MEMORY.name]
        kinds = [k for k in self.s.kinds if k in COUNTER_KINDS]
        if not cs:
            if kinds:
                rep.check("counter", False, "no \"GPU memory\" counter events")
            else:
                rep.skip("counter", "no counter events and no counted kinds")
            return
        errs = []
        last = {}
        for e in self.sorted_ts(cs):
            a = e.args
            if not isinstance(e.get(T.PID), int) or e.get(T.PID) < self.gpu_base:
                errs.append("counter at ts %s on pid %r (not a GPU pid)" % (e.get(T.TS),
                                                                           e.get(T.PID)))
            for k in COUNTER_KINDS:
                if k not in a:
                    errs.append("counter at ts %s lacks %s" % (e.get(T.TS), k))
            for k, v in a.items():
                if not isinstance(v, (int, decimal.Decimal)) or isinstance(v, bool):
                    errs.append("counter at ts %s: %s=%r is not a number" % (e.get(T.TS), k, v))
                elif v < 0:
                    errs.append("counter at ts %s: %s=%r is negative" % (e.get(T.TS), k, v))
                else:
                    last[(e.get(T.PID), k)] = v
        final = collections.Counter()
        for (pid, k), v in last.items():
            final[k] += v
        for k in kinds:
            want = self.expected_live(k)
            if final.get(k) != want:
                errs.append("kind %s: final counter %r, live_end %d" % (k, final.get(k), want))
        rep.check("counter", not errs, "%d counter events; final %s" % (
            len(cs), ", ".join("%s=%s" % (k, final[k]) for k in COUNTER_KINDS if k in final)),
            errs)

    # -- oom ---------------------------------------------------------------
    def check_oom(self):
        rep, s = self.rep, self.s
        ooms = [e for e in self.ev if e.get(T.NAME) == EV.OOM.name]
        if s.oom_summary is not None and s.oom_summary != len(s.ooms):
            rep.check("sample_summary_oom", False, "oom count=%d but %d GPUPROF_OOM lines" % (
                s.oom_summary, len(s.ooms)))
        if not s.ooms and not ooms:
            rep.skip("oom", "none expected, none traced")
            return
        errs = []
        notes = []
        left = list(ooms)
        for x in s.ooms:
            cands = [e for e in left if e.args.get(F.BYTES) == x["bytes"]
                     and e.args.get(F.DEVICE) == x["device"]]
            exact = [e for e in cands if e.args.get(F.API) == x["api"]]
            equiv = [e for e in cands if isinstance(e.args.get(F.API), str) and any(
                e.args[F.API].startswith(p) for p in API_EQUIVALENTS.get(x["api"], ()))]
            pick = (exact or equiv or [None])[0]
            w = "%s(%d) on device %d" % (x["api"], x["bytes"], x["device"])
            if pick is None:
                errs.append("%s: no oom event with these bytes and device (traced: %s)" % (
                    w, [(e.args.get(F.API), e.args.get(F.BYTES), e.args.get(F.DEVICE))
                        for e in ooms]))
                continue
            left.remove(pick)
            a = pick.args
            if not exact:
                notes.append("%s is traced as api %r" % (w, a.get(F.API)))
            if pick.get(T.PID) != self.host_pid or pick.get(T.TID) != x["tid"]:
                errs.append("%s: on pid %r tid %r, the sample's is %r/%d" % (
                    w, pick.get(T.PID), pick.get(T.TID), self.host_pid, x["tid"]))
            if pick.get(T.CAT) != CAT.MEMORY or pick.get(T.PH) != "i" or pick.get(T.S) != "p":
                errs.append("%s: cat %r ph %r s %r (documented: memory, i, p)" % (
                    w, pick.get(T.CAT), pick.get(T.PH), pick.get(T.S)))
            fr, to = a.get(F.FREE), a.get(F.TOTAL)
            if not _is_int(fr) or not _is_int(to) or not 0 <= fr <= to:
                errs.append("%s: free %r / total %r" % (w, fr, to))
            else:
                dev_total = self.devices.get(x["device"], {}).get(F.TOTAL_MEMORY)
                if to not in (x["total"], dev_total):
                    errs.append("%s: total %d, cudaMemGetInfo said %d, gpuprof.device %r" % (
                        w, to, x["total"], dev_total))
            if a.get(F.RESULT) != x["result"]:
                errs.append("%s: result %r, the call returned %d (%s)" % (
                    w, a.get(F.RESULT), x["result"], x["error"]))
            if not isinstance(a.get(F.ERROR), str):
                errs.append("%s: error name %r" % (w, a.get(F.ERROR)))
        for e in left:
            errs.append("unexpected oom event: %r" % dict(e.args))
        rep.check("oom", not errs, "%d expected, %d traced" % (len(s.ooms), len(ooms)), errs)
        for n in notes:
            rep.note(n)

    # -- copies, sets, kernels ---------------------------------------------
    def check_ops(self):
        rep, s = self.rep, self.s
        if not s.ops and s.ops_summary is None:
            rep.skip("ops", "the sample prints no GPUPROF_OP lines")
            return
        # self-check of the summary
        if s.ops_summary is not None:
            mine = {"memcpy": 0, "memcpy_bytes": 0, "memset": 0, "memset_bytes": 0, "kernels": 0}
            for o in s.ops:
                k = o["key"]
                if k[0] == "memcpy":
                    mine["memcpy"] += 1
                    mine["memcpy_bytes"] += k[2]
                elif k[0] == "memset":
                    mine["memset"] += 1
                    mine["memset_bytes"] += k[1]
                else:
                    mine["kernels"] += 1
            rep.check("sample_summary_ops", mine == s.ops_summary,
                      "summary %r, detail lines %r" % (s.ops_summary, mine))
        gpu, errs = [], []
        for e in self.ev:
            cat = e.get(T.CAT)
            if e.get(T.PH) != "X" or cat not in (CAT.MEMCPY, CAT.MEMSET, CAT.KERNEL):
                continue
            a = e.args
            if cat == CAT.MEMCPY:
                nm = e.get(T.NAME, "")
                if not nm.startswith("memcpy ") or not _is_int(a.get(F.BYTES)):
                    errs.append("memcpy event %r bytes %r" % (nm, a.get(F.BYTES)))
                    continue
                e.key = ("memcpy", nm[len("memcpy "):], a[F.BYTES])
            elif cat == CAT.MEMSET:
                if not _is_int(a.get(F.BYTES)):
                    errs.append("memset event bytes %r" % a.get(F.BYTES))
                    continue
                e.key = ("memset", a[F.BYTES], a.get(F.VALUE))
            else:
                g, b = a.get(F.GRID), a.get(F.BLOCK)
                if not (isinstance(g, list) and isinstance(b, list) and len(g) == 3
                        and len(b) == 3):
                    errs.append("kernel %r grid %r block %r" % (e.get(T.NAME), g, b))
                    continue
                e.key = ("kernel", e.get(T.NAME, "").split("(")[0], tuple(g), tuple(b))
            if not _is_int(a.get(F.CORR)):
                errs.append("%s event %r without integer corr" % (cat, e.get(T.NAME)))
            if not isinstance(e.get(T.PID), int) or e.get(T.PID) < self.gpu_base:
                errs.append("%s event %r on pid %r (not a GPU pid)" % (cat, e.get(T.NAME),
                                                                     e.get(T.PID)))
            gpu.append(e)
        exp = collections.Counter(o["key"] for o in s.ops)
        got = collections.Counter(e.key for e in gpu)
        missing = exp - got
        extra = got - exp
        for k, n in sorted(missing.items(), key=str):
            errs.append("missing %dx %s" % (n, k))
        for k, n in sorted(extra.items(), key=str):
            errs.append("unexpected %dx %s" % (n, k))
        parts = []
        for cat in ("memcpy", "memset", "kernel"):
            def nb(c):
                n = sum(v for k, v in c.items() if k[0] == cat)
                if cat == "memcpy":
                    b = sum(v * k[2] for k, v in c.items() if k[0] == cat)
                elif cat == "memset":
                    b = sum(v * k[1] for k, v in c.items() if k[0] == cat)
                else:
                    b = 0
                return n, b
            (en, eb), (gn, gb) = nb(exp), nb(got)
            parts.append("%s %d/%d" % (cat, gn, en) + (" (%d/%d bytes)" % (gb, eb)
                                                         if cat != "kernel" else ""))
        for d in ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP"):
            en = sum(v for k, v in exp.items() if k[0] == "memcpy" and k[1] == d)
            gn = sum(v for k, v in got.items() if k[0] == "memcpy" and k[1] == d)
            if en or gn:
                parts.append("%s %d/%d" % (d, gn, en))
        rep.check("ops", not errs, "[traced/expected] " + ", ".join(parts), errs)

        # per-operation checks where the key is unique on both sides
        errs, notes = [], []
        gpu_by_key = collections.defaultdict(list)
        for e in gpu:
            gpu_by_key[e.key].append(e)
        flows = collections.defaultdict(list)
        for e in self.ev:
            if e.get(T.CAT) == CAT.FLOW and e.get(T.PH) in ("s", "f"):
                flows[(e.get(T.PH), _id(e.get(T.ID)))].append(e)
        stream_map = collections.defaultdict(set)
        n_unique = 0
        for o in s.ops:
            if exp[o["key"]] != 1 or len(gpu_by_key.get(o["key"], [])) != 1:
                continue
            n_unique += 1
            e = gpu_by_key[o["key"]][0]
            a = e.args
            w = "%s (line %d)" % (o["key"], o["lineno"])
            stream_map[o["stream"]].add(e.get(T.TID))
            corr = a.get(F.CORR)
            apis = self.api_by_corr.get(corr, [])
            if not apis:
                errs.append("%s: no API event with corr %r" % (w, corr))
            elif not any(x.get(T.TID) == o["tid"] for x in apis):
                errs.append("%s: API event(s) with corr %r on tid %s, issued from tid %d" % (
                    w, corr, sorted({x.get(T.TID) for x in apis}), o["tid"]))
            if o["key"][0] == "memcpy" and o["key"][1] in ("HtoD", "DtoH") and \
                    a.get(F.ASYNC) is not o["async"]:
                errs.append("%s: async %r, the sample's call was %s" % (
                    w, a.get(F.ASYNC), "async" if o["async"] else "synchronous"))
            if o["key"][0] == "kernel":
                fs = flows.get(("s", corr), [])
                ff = flows.get(("f", corr), [])
                if not any(x.get(T.PID) == self.host_pid and x.get(T.TID) == o["tid"]
                           for x in fs):
                    errs.append("%s: no launch flow start (s, id %r) on tid %d" % (
                        w, corr, o["tid"]))
                if not any(x.get(T.PID) == e.get(T.PID) and x.get(T.TID) == e.get(T.TID)
                           for x in ff):
                    errs.append("%s: no launch flow end (f, id %r) on its stream" % (w, corr))
        labels = {}
        for label, tids in stream_map.items():
            if len(tids) != 1:
                errs.append("sample stream %s appears on GPU tracks %s" % (label, sorted(tids)))
            for t in tids:
                if t in labels and labels[t] != label:
                    errs.append("GPU track %r holds sample streams %s and %s" % (
                        t, labels[t], label))
                labels[t] = label
        rep.check("ops_attribution", not errs, "%d operations matched one to one; streams %s" % (
            n_unique, ", ".join("%s->%s" % (k, sorted(v)) for k, v in sorted(stream_map.items()))),
            errs)

    # -- NVTX --------------------------------------------------------------
    def _domain_ok(self, args, want, custom):
        got = args.get(F.DOMAIN)
        if want is None:
            return got not in custom
        return got == want

    @staticmethod
    def _color_ok(got, want):
        if isinstance(got, bool):
            return False
        if isinstance(got, int):
            return got in (want, want & 0xFFFFFF)
        if isinstance(got, str):
            g = got.strip()
            try:
                if g.startswith("#"):
                    v = int(g[1:], 16)
                    return v == (want & 0xFFFFFF) if len(g) == 7 else v == want
                v = int(g, 0)
                return v in (want, want & 0xFFFFFF)
            except ValueError:
                return False
        return False

    def _attrs(self, ev, o, custom, w):
        errs = []
        a = ev.args
        if not self._domain_ok(a, o.get("domain"), custom):
            errs.append("%s: domain %r, expected %r" % (w, a.get(F.DOMAIN),
                                                        o.get("domain") or "(default)"))
        if "category" in o:
            c = a.get(F.CATEGORY)
            if not (c == o["category"] or str(c) == str(o["category"])
                    or (c is not None and c == o.get("category_name"))):
                errs.append("%s: category %r, expected %d (%r)" % (
                    w, c, o["category"], o.get("category_name")))
        if "color" in o and not self._color_ok(a.get(F.COLOR), o["color"]):
            errs.append("%s: color %r, expected 0x%08X" % (w, a.get(F.COLOR), o["color"]))
        if "payload" in o and a.get(F.PAYLOAD) != o["payload"]:
            errs.append("%s: payload %r, expected %d" % (w, a.get(F.PAYLOAD), o["payload"]))
        return errs

    def check_nvtx(self):
        rep, s = self.rep, self.s
        nv = [e for e in self.ev if e.get(T.CAT) == CAT.NVTX]
        if s.nvtx_summary is not None and s.nvtx_summary != len(s.nvtx):
            rep.check("sample_summary_nvtx", False, "nvtx threads=%d but %d threads printed" % (
                s.nvtx_summary, len(s.nvtx)))
        if not s.nvtx:
            rep.check("nvtx", not nv, "the sample makes no NVTX calls; %d NVTX events traced"
                      % len(nv))
            return
        custom = {o["domain"] for ops in s.nvtx.values() for o in ops if o.get("domain")}
        tids = {s.nvtx_tid[th]: th for th in s.nvtx}
        be = collections.defaultdict(list)
        for e in self.sorted_ts([e for e in nv if e.get(T.PH) in ("B", "E")]):
            be[e.get(T.TID)].append(e)
        errs = []
        for t in sorted(set(be) - set(tids)):
            errs.append("tid %r has %d B/E events; the sample pushed nothing there" % (
                t, len(be[t])))

        # push/pop per thread, and the ranges around cudaMalloc calls
        alloc_pairs = collections.defaultdict(list)
        for m, e in self.matched:
            if m.op == "alloc":
                alloc_pairs[(m.addr, m.bytes, m.tid)].append(e)
        n_ranges = 0
        inside_checks = []   # (w, B ev, E ev or None, alloc ev, tid)
        for th in sorted(s.nvtx):
            tid = s.nvtx_tid[th]
            got = be.get(tid, [])
            gi = 0
            stack = []            # [(op, B event, pending alloc list)]
            bad = False
            for o in s.nvtx[th]:
                w = "thread %d (tid %d) call n=%d %s" % (th, tid, o["n"], o["op"])
                if o["op"] == "push":
                    if gi >= len(got):
                        errs.append("%s %r: trace has no more B/E events on this thread" % (
                            w, o["name"]))
                        bad = True
                        break
                    e = got[gi]
                    gi += 1
                    if e.get(T.PH) != "B" or e.get(T.NAME) != o["name"]:
                        errs.append("%s %r: trace has %s %r at ts %s" % (
                            w, o["name"], e.get(T.PH), e.get(T.NAME), e.get(T.TS)))
                        bad = True
                        break
                    errs.extend(self._attrs(e, o, custom, w))
                    stack.append([o, e, []])
                    n_ranges += 1
                elif o["op"] == "pop":
                    if not stack:
                        errs.append("%s: sample pops more than it pushed (sample bug)" % w)
                        bad = True
                        break
                    if gi >= len(got):
                        errs.append("%s of %r: trace has no more B/E events on this thread" % (
                            w, stack[-1][0]["name"]))
                        bad = True
                        break
                    e = got[gi]
                    gi += 1
                    if e.get(T.PH) != "E":
                        errs.append("%s of %r: trace has %s %r at ts %s" % (
                            w, stack[-1][0]["name"], e.get(T.PH), e.get(T.NAME), e.get(T.TS)))
                        bad = True
                        break
                    _, b, pend = stack.pop()
                    if e.ts_ns < b.ts_ns:
                        errs.append("%s: E at ts %s before its B at %s" % (w, e.get(T.TS),
                                                                          b.get(T.TS)))
                    for p in pend:
                        inside_checks.append(p + [b, e])
                elif o["op"] == "alloc":
                    q = alloc_pairs.get((o["addr"], o["bytes"], tid))
                    if not q:
                        errs.append("%s 0x%x: no matching alloc event in the trace" % (
                            w, o["addr"]))
                        continue
                    ae = q.pop(0)
                    if stack:
                        stack[-1][2].append([w, ae, tid])
            if not bad:
                for o, b, pend in stack:
                    errs.append("thread %d: sample left %r open (sample bug)" % (th, o["name"]))
                if gi < len(got):
                    errs.append("thread %d (tid %d): %d more B/E events than the sample's "
                                "push/pop calls, first %s %r at ts %s" % (
                                    th, tid, len(got) - gi, got[gi].get(T.PH),
                                    got[gi].get(T.NAME), got[gi].get(T.TS)))
        rep.check("nvtx_nesting", not errs, "%d threads, %d push/pop ranges" % (
            len(s.nvtx), n_ranges), errs)

        errs = []
        for w, ae, tid, b, e in inside_checks:
            apis = [x for x in self.api_by_corr.get(ae.args[F.CORR], []) if x.get(T.TID) == tid]
            if self.callbacks and ae.args.get(F.THREAD) == tid:
                apis = [ae]  # recorded by the callbacks, in the call: its own time
            if not apis:
                errs.append("%s: no API event for the allocation on this thread" % w)
                continue
            x = apis[0]
            if not b.ts_ns <= x.ts_ns <= e.ts_ns:
                errs.append("%s: %s at ts %s is outside its range %r [%s, %s]" % (
                    w, x.get(T.NAME), x.get(T.TS), b.get(T.NAME), b.get(T.TS), e.get(T.TS)))
        if inside_checks:
            rep.check("nvtx_allocs", not errs, "%d cudaMalloc calls inside ranges" % len(
                inside_checks), errs)

        # marks
        errs = []
        exp_marks = []
        for th in s.nvtx:
            for o in s.nvtx[th]:
                if o["op"] == "mark":
                    exp_marks.append((s.nvtx_tid[th], o))
        got_marks = [e for e in nv if e.get(T.PH) in ("i", "I")]
        left = list(got_marks)
        for tid, o in exp_marks:
            m = [e for e in left if e.get(T.TID) == tid and e.get(T.NAME) == o["name"]]
            if not m:
                errs.append("mark %r on tid %d is not in the trace" % (o["name"], tid))
                continue
            left.remove(m[0])
            errs.extend(self._attrs(m[0], o, custom, "mark %r" % o["name"]))
        for e in left:
            errs.append("unexpected mark %r on tid %r" % (e.get(T.NAME), e.get(T.TID)))
        rep.check("nvtx_marks", not errs, "%d expected, %d traced" % (len(exp_marks),
                                                                    len(got_marks)), errs)

        # start/end
        errs = []
        starts, ends = {}, {}
        for th in s.nvtx:
            for o in s.nvtx[th]:
                if o["op"] == "start":
                    starts[o["key"]] = (s.nvtx_tid[th], o)
                elif o["op"] == "end":
                    ends[o["key"]] = (s.nvtx_tid[th], o)
        bs = [e for e in nv if e.get(T.PH) == "b"]
        es = [e for e in nv if e.get(T.PH) == "e"]
        e_by_id = collections.defaultdict(list)
        for e in es:
            e_by_id[_id(e.get(T.ID))].append(e)
        ids = collections.Counter(_id(e.get(T.ID)) for e in bs)
        for i, n in ids.items():
            if n > 1:
                errs.append("%d b events share id %r" % (n, i))
        used_b, used_e = set(), set()
        for key, (tid, o) in sorted(starts.items()):
            cand = [e for e in bs if e.get(T.TID) == tid and e.get(T.NAME) == o["name"]]
            if len(cand) != 1:
                errs.append("start %s %r on tid %d: %d b events" % (key, o["name"], tid, len(cand)))
                continue
            b = cand[0]
            used_b.add(b.idx)
            errs.extend(self._attrs(b, o, custom, "start %s" % key))
            if key not in ends:
                continue
            etid = ends[key][0]
            ee = e_by_id.get(_id(b.get(T.ID)), [])
            if len(ee) != 1:
                errs.append("start %s %r (id %r): %d e events with that id" % (
                    key, o["name"], b.get(T.ID), len(ee)))
                continue
            e = ee[0]
            used_e.add(e.idx)
            if e.get(T.TID) != etid:
                errs.append("end %s on tid %r, the sample ended it on tid %d" % (
                    key, e.get(T.TID), etid))
            if e.ts_ns < b.ts_ns:
                errs.append("end %s at ts %s before its start at %s" % (key, e.get(T.TS),
                                                                        b.get(T.TS)))
            if e.get(T.CAT) != b.get(T.CAT):
                errs.append("end %s cat %r != start cat %r" % (key, e.get(T.CAT), b.get(T.CAT)))
        for b in bs:
            if b.idx not in used_b:
                errs.append("unexpected b %r on tid %r" % (b.get(T.NAME), b.get(T.TID)))
        for e in es:
            if e.idx not in used_e:
                errs.append("unpaired e (id %r) on tid %r" % (e.get(T.ID), e.get(T.TID)))
        cross = sum(1 for k in starts if k in ends and starts[k][0] != ends[k][0])
        rep.check("nvtx_start_end", not errs, "%d ranges (%d across threads)" % (
            len(starts), cross), errs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("sample_stdout")
    ap.add_argument("--allow-recovered", action="store_true",
                    help="accept a trace repaired after a crash (gpuprof.end recovered=true)")
    ap.add_argument("--callbacks", action="store_true",
                    help="recorded without pool records: allocations and frees come from "
                         "the API callbacks or patched calls (thread and API in the event, "
                         "no pool args)")
    args = ap.parse_args(argv)
    rep = Report()
    name = os.path.basename(args.sample_stdout).split(".")[0]
    try:
        sample = parse_sample(args.sample_stdout)
    except (OSError, SampleError) as e:
        rep.check("sample", False, "cannot read the sample's output: %s" % e)
        print("RESULT %s FAIL expected_allocs=? traced_allocs=? expected_frees=? traced_frees=? "
              "expected_bytes=? traced_bytes=? dropped=? trace_bytes=%d failed=sample" % (
                  name, os.path.getsize(args.trace) if os.path.exists(args.trace) else 0))
        return 1
    name = (sample.name or name) + (".callbacks" if args.callbacks else "")
    exp_allocs = sum(1 for m in sample.mem if m.op == "alloc")
    exp_frees = sum(1 for m in sample.mem if m.op == "free")
    exp_bytes = sum(m.bytes for m in sample.mem if m.op == "alloc")
    errs = []
    if sample.pid is None:
        errs.append("no GPUPROF_BEGIN line")
    if sample.exit is None:
        errs.append("no GPUPROF_EXPECT exit= line")
    elif sample.exit == "normal" and not sample.ended:
        errs.append("no GPUPROF_END line: the sample did not finish")
    elif sample.exit == "killed" and sample.kill_t_ms is None:
        errs.append("no GPUPROF_KILL line: the sample died before its kill")
    if not (sample.mem or sample.ooms or sample.ops or sample.nvtx):
        # a trace agrees with an empty story whatever it holds
        errs.append("the sample logged no allocation, OOM, operation or NVTX range: nothing to check")
    rep.check("sample", not errs, "%s pid %s: %d allocs, %d frees, %d ooms, %d ops, "
              "%d NVTX threads, exit=%s" % (name, sample.pid, exp_allocs, exp_frees,
                                            len(sample.ooms), len(sample.ops), len(sample.nvtx),
                                            sample.exit), errs)
    stats = {"traced_allocs": 0, "traced_frees": 0, "traced_bytes": 0, "dropped": "?"}
    size = 0
    try:
        size = os.path.getsize(args.trace)
    except OSError:
        pass
    try:
        info = load_trace(args.trace, rep)
        c = Checker(sample, info, args.allow_recovered, rep, args.callbacks)
        stats = c.stats
        c.check_frame()
        c.check_memory()
        c.check_counter()
        c.check_oom()
        c.check_ops()
        c.check_nvtx()
    except Fatal:
        if not rep.failed:
            rep.check("trace", False, "cannot be checked")
    ok = not rep.failed
    print("RESULT %s %s expected_allocs=%d traced_allocs=%d expected_frees=%d traced_frees=%d "
          "expected_bytes=%d traced_bytes=%d dropped=%s skipped_memory_records=%s trace_bytes=%d%s" % (
              name, "PASS" if ok else "FAIL", exp_allocs, stats["traced_allocs"], exp_frees,
              stats["traced_frees"], exp_bytes, stats["traced_bytes"], stats["dropped"],
              stats.get("skipped"), size,
              "" if ok else " failed=" + ",".join(rep.failed)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
