#!/usr/bin/env python3
"""CPU self-test of check_trace.py: small synthetic traces written in the
documented format (exporters/TRACE_FORMAT.md), one that passes and many that
must fail. Run: python3 tests/gpu/test_check_trace.py"""

import copy
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_trace.py")
sys.path.insert(0, os.path.join(HERE, "..", "..", "exporters"))
from trace_format import CAT, EV, F, FORMAT, KIND, T  # noqa: E402  (the names of the trace)

PID = 4242
TID2 = 4243
GPU = 1000000000 + PID * 100
HOSTILE = b'a"b\\c\nd\te\xff f\xc3( \x01 \xe2\x9c\x93'
HOSTILE_DECODED = HOSTILE.decode("utf-8", "replace")
DOM = 'dom "x" \\'
TOTAL = 80 * 2**30
HUGE = TOTAL + 2**30


def fmt_us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


class Trace:
    """Events as (dict, ts_ns, dur_ns); written with exactly-3-decimal ts."""

    def __init__(self):
        self.ev = []
        self.corr = 100

    def add(self, ph, name, pid, tid, ts, cat=None, dur=None, args=None, scope=None,
            event_id=None, bp=None):
        """scope: s of instant events; event_id: id (flow or NVTX range)."""
        e = {T.PH: ph, T.NAME: name, T.PID: pid, T.TID: tid}
        if cat:
            e[T.CAT] = cat
        for key, value in ((T.S, scope), (T.ID, event_id), (T.BP, bp)):
            if value is not None:
                e[key] = value
        if args is not None:
            e[T.ARGS] = args
        self.ev.append([e, ts, dur])
        return e

    def api(self, name, tid, ts, dur=500):
        self.corr += 1
        self.add("X", name, PID, tid, ts, cat=EV.API_RUNTIME.cat, dur=dur,
                 args={F.CORR: self.corr})
        return self.corr

    def mem(self, op, addr, nbytes, kind, ts, corr, stream=-1, is_async=False, pool=None):
        """op: EV.ALLOC or EV.FREE."""
        a = {F.ADDR: hex(addr), F.BYTES: nbytes, F.KIND: kind, F.DEVICE: 0, F.STREAM: stream,
             F.CORR: corr, F.ASYNC: is_async}
        if pool is not None:
            a.update({F.POOL: hex(pool), F.POOL_TYPE: "local", F.POOL_SIZE: 2**21,
                      F.POOL_USED: nbytes})
        return self.add("i", op.name, GPU, stream if is_async else 0, ts, cat=op.cat, scope="t",
                        args=a)

    def lines(self):
        out = []
        for e, ts, dur in self.ev:
            d = dict(e)
            d[T.TS] = "@TS@"
            if dur is not None:
                d[T.DUR] = "@DUR@"
            s = json.dumps(d, ensure_ascii=False)
            s = s.replace('"@TS@"', fmt_us(ts))
            if dur is not None:
                s = s.replace('"@DUR@"', fmt_us(dur))
            out.append(s)
        return out

    def text(self):
        ls = self.lines()
        return "[\n" + "".join(l + ",\n" for l in ls[:-1]) + ls[-1] + "\n]\n"


def base_case():
    """Returns (Trace, sample stdout lines) that must PASS."""
    t = Trace()
    s = ["GPUPROF_BEGIN sample=synthetic pid=%d format=1" % PID, "some human text"]
    t.add("i", EV.META.name, PID, PID, 0, scope="g", args={
        F.FORMAT: FORMAT, F.VERSION: "0.1.0", F.PID: PID, F.PPID: 1, F.CMDLINE: "synthetic",
        F.HOSTNAME: "h", F.START_UNIX_NS: 1, F.TS_BASE_NS: 123456789, F.CLOCK: "cupti",
        F.MODE: "cuda", F.GPU_PID_BASE: GPU})
    t.add("M", EV.PROCESS_NAME.name, PID, 0, 0, args={F.NAME: "synthetic (pid %d)" % PID})
    t.add("i", EV.DEVICE.name, GPU, 0, 1, scope="g", args={
        F.DEVICE: 0, F.NAME: "NVIDIA H100", F.TOTAL_MEMORY: TOTAL, F.UUID: "GPU-x",
        F.CC: "9.0", F.GPU_PID: GPU})
    seq = [0]

    def sline(tag, ts, tid, kind, api, addr, n, extra=""):
        seq[0] += 1
        s.append("%s seq=%d t_ms=%d tid=%d device=0 kind=%s api=%s addr=0x%x bytes=%d%s" % (
            tag, seq[0], ts // 1000000, tid, kind, api, addr, n, extra))

    # NVTX on thread PID: outer > hostile; the cudaMalloc of 0x2000 inside
    t.add("B", "outer", PID, PID, 900, cat=CAT.NVTX, args={F.DOMAIN: "default"})
    s_nv0 = ["op=push name_hex=%s" % b"outer".hex()]
    t.add("B", HOSTILE_DECODED, PID, PID, 950, cat=CAT.NVTX,
          args={F.DOMAIN: "default", F.COLOR: "0xff3366cc", F.PAYLOAD: 1000})
    s_nv0.append("op=push name_hex=%s color=0xFF3366CC payload=1000" % HOSTILE.hex())

    c = t.api("cudaMalloc", PID, 1000)
    t.mem(EV.ALLOC, 0x1000, 100, KIND.DEVICE, 1100, c)
    sline("GPUPROF_ALLOC", 1000, PID, "device", "cudaMalloc", 0x1000, 100)
    c = t.api("cudaMalloc", PID, 2000)
    t.mem(EV.ALLOC, 0x2000, 50, KIND.DEVICE, 2100, c)
    sline("GPUPROF_ALLOC", 2000, PID, "device", "cudaMalloc", 0x2000, 50)
    s_nv0.append("op=alloc addr=0x2000 bytes=50")
    t.add("b", "span", PID, PID, 2500, cat=CAT.NVTX, event_id=77, args={F.DOMAIN: "default"})
    s_nv0.append("op=start key=k1 name_hex=%s id=77" % b"span".hex())
    t.add("E", "", PID, PID, 2600, cat=CAT.NVTX)
    s_nv0.append("op=pop")
    c = t.api("cudaFree", PID, 3000)
    sline("GPUPROF_FREE", 3000, PID, "device", "cudaFree", 0x1000, 100)
    t.mem(EV.FREE, 0x1000, 100, KIND.DEVICE, 3100, c)
    c = t.api("cudaMalloc", PID, 4000)
    t.mem(EV.ALLOC, 0x1000, 30, KIND.DEVICE, 4100, c)           # address reuse
    sline("GPUPROF_ALLOC", 4000, PID, "device", "cudaMalloc", 0x1000, 30)
    # stream-ordered on stream 13
    c = t.api("cudaMallocAsync", PID, 5000)
    t.mem(EV.ALLOC, 0x3000, 512, KIND.DEVICE, 5100, c, stream=13, is_async=True, pool=0x300000)
    ex = " async=1 pool=default stream=s1 stream_id=13"
    sline("GPUPROF_ALLOC", 5000, PID, "device", "cudaMallocAsync", 0x3000, 512, ex)
    c = t.api("cudaFreeAsync", PID, 6000)
    sline("GPUPROF_FREE", 6000, PID, "device", "cudaFreeAsync", 0x3000, 512, ex)
    t.mem(EV.FREE, 0x3000, 512, KIND.DEVICE, 6100, c, stream=13, is_async=True)
    # pinned on the second thread
    c = t.api("cudaMallocHost", TID2, 6500)
    t.mem(EV.ALLOC, 0x7f0000001000, 4096, KIND.PINNED_HOST, 6600, c)
    sline("GPUPROF_ALLOC", 6500, TID2, "pinned_host", "cudaMallocHost", 0x7f0000001000, 4096)
    # a module global: tolerated extra
    t.mem(EV.ALLOC, 0x9000, 256, KIND.DEVICE_STATIC, 700, t.api("cudaLaunchKernel", PID, 650))
    t.add("E", "", PID, PID, 6800, cat=CAT.NVTX)
    s_nv0.append("op=pop")

    # OOM
    t.add("i", EV.OOM.name, PID, PID, 7000, cat=CAT.MEMORY, scope="p", args={
        F.API: "cudaMalloc", F.BYTES: HUGE, F.DEVICE: 0, F.FREE: TOTAL - 2**30,
        F.TOTAL: TOTAL, F.RESULT: 2, F.ERROR: "cudaErrorMemoryAllocation"})
    s.append("GPUPROF_OOM t_ms=0 tid=%d api=cudaMalloc bytes=%d device=0 result=2 "
             "error=cudaErrorMemoryAllocation free=%d total=%d" % (PID, HUGE, TOTAL - 2**30,
                                                                   TOTAL))
    # ops
    c = t.api("cudaMemcpy", PID, 8000)
    t.add("X", "memcpy HtoD", GPU, 7, 8100, cat=EV.MEMCPY.cat, dur=50, args={
        F.CORR: c, F.BYTES: 4096, F.KIND: "HtoD", F.SRC_KIND: KIND.PAGEABLE,
        F.DST_KIND: KIND.DEVICE, F.ASYNC: False})
    s.append("GPUPROF_OP t_ms=0 tid=%d op=memcpy dir=HtoD bytes=4096 async=0 stream=legacy" % PID)
    c = t.api("cudaMemsetAsync", PID, 8200)
    t.add("X", EV.MEMSET.name, GPU, 13, 8300, cat=EV.MEMSET.cat, dur=5, args={
        F.CORR: c, F.BYTES: 64, F.VALUE: 0, F.KIND: KIND.DEVICE})
    s.append("GPUPROF_OP t_ms=0 tid=%d op=memset bytes=64 value=0 async=1 stream=s1" % PID)
    c = t.api("cudaLaunchKernel", PID, 8400)
    t.add("X", "gp_k", GPU, 13, 8500, cat=EV.KERNEL.cat, dur=10, args={
        F.CORR: c, F.GRID: [2, 1, 1], F.BLOCK: [128, 1, 1], F.SMEM_STATIC: 0,
        F.SMEM_DYNAMIC: 0, F.REGS: 16})
    t.add("s", EV.LAUNCH_START.name, PID, PID, 8400, cat=CAT.FLOW, event_id=c)
    t.add("f", EV.LAUNCH_END.name, GPU, 13, 8500, cat=CAT.FLOW, event_id=c, bp="e")
    s.append("GPUPROF_OP t_ms=0 tid=%d op=kernel name=gp_k grid=2,1,1 block=128,1,1 "
             "stream=s1" % PID)

    # NVTX on thread TID2: domain push with category and color, end of span, mark
    t.add("B", "reg", PID, TID2, 9000, cat=CAT.NVTX,
          args={F.DOMAIN: DOM, F.CATEGORY: 7, F.COLOR: "0xff00ff00"})
    s_nv1 = ["op=push name_hex=%s domain_hex=%s category=7 category_name_hex=%s "
             "color=0xFF00FF00" % (b"reg".hex(), DOM.encode().hex(), b"io".hex())]
    t.add("e", "span", PID, TID2, 9100, cat=CAT.NVTX, event_id=77)
    s_nv1.append("op=end key=k1 id=77")
    t.add("E", "", PID, TID2, 9200, cat=CAT.NVTX)
    s_nv1.append("op=pop domain_hex=%s" % DOM.encode().hex())
    t.add("i", "m\u00e9", PID, TID2, 9300, cat=CAT.NVTX, scope="t", args={F.DOMAIN: "default"})
    s_nv1.append("op=mark name_hex=%s" % "m\u00e9".encode().hex())

    # counters (device: 100, 150, 50, 80, 592, 80; pinned 4096)
    live = [(1100, 100, 0), (2100, 150, 0), (3100, 50, 0), (4100, 80, 0), (5100, 592, 0),
            (6100, 80, 0), (6600, 80, 4096)]
    for ts, dev, pin in live:
        t.add("C", EV.GPU_MEMORY.name, GPU, 0, ts, cat=CAT.MEMORY, args={
            F.DEVICE: dev, F.DEVICE_STATIC: 256, F.MANAGED: 0, F.PINNED_HOST: pin,
            F.POOL_RESERVED: 2**21})

    for i, l in enumerate(s_nv0):
        s.append("GPUPROF_NVTX thread=0 tid=%d n=%d %s" % (PID, i, l))
    for i, l in enumerate(s_nv1):
        s.append("GPUPROF_NVTX thread=1 tid=%d n=%d %s" % (TID2, i, l))
    s += ["GPUPROF_EXPECT kind=device allocs=4 frees=2 alloc_bytes=692 free_bytes=612 "
          "live_end=80 t_ms=9",
          "GPUPROF_EXPECT kind=pinned_host allocs=1 frees=0 alloc_bytes=4096 free_bytes=0 "
          "live_end=4096 t_ms=9",
          "GPUPROF_EXPECT ops memcpy=1 memcpy_bytes=4096 memset=1 memset_bytes=64 kernels=1",
          "GPUPROF_EXPECT oom count=1",
          "GPUPROF_EXPECT nvtx threads=2",
          "GPUPROF_EXPECT exit=normal",
          "GPUPROF_END sample=synthetic"]
    t.add("i", EV.END.name, PID, PID, 20000, scope="g", args={
        F.CLEAN: True, F.RECOVERED: False, F.DROPPED_CUPTI: 0, F.DROPPED_HOST: 0,
        F.LATE_MEMORY_RECORDS: 0, F.RECORDS: 20, F.EVENTS: len(t.ev) + 1,
        F.DEVICES: [{F.DEVICE: 0, F.NAME: "NVIDIA H100", F.TOTAL_MEMORY: TOTAL}]})
    return t, s


def find(t, pred):
    return [x for x in t.ev if pred(x[0])]


def drop(t, pred):
    n = len(t.ev)
    t.ev = [x for x in t.ev if not pred(x[0])]
    assert len(t.ev) < n, "nothing dropped"


def end_args(t):
    return t.ev[-1][0][T.ARGS]


class CheckerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gp_check_")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def run_checker(self, t, s, extra=(), raw=None):
        tp = os.path.join(self.dir, "t.json.gz")
        sp = os.path.join(self.dir, "s.stdout")
        data = gzip.compress((raw if raw is not None else t.text()).encode("utf-8"))
        with open(tp, "wb") as f:
            f.write(data)
        with open(sp, "w") as f:
            f.write("\n".join(s) + "\n")
        p = subprocess.run([sys.executable, CHECKER, tp, sp] + list(extra),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.last_output = p.stdout
        return p.returncode, p.stdout

    def assertPass(self, t, s, extra=()):
        rc, out = self.run_checker(t, s, extra)
        self.assertEqual(rc, 0, out)
        self.assertIn("RESULT synthetic PASS", out)
        return out

    def assertFail(self, t, s, check, extra=(), raw=None):
        rc, out = self.run_checker(t, s, extra, raw)
        self.assertEqual(rc, 1, out)
        self.assertIn("RESULT synthetic FAIL", out)
        self.assertIn("CHECK %s FAIL" % check, out)
        return out

    # -- passing -----------------------------------------------------------
    def test_pass(self):
        t, s = base_case()
        out = self.assertPass(t, s)
        self.assertIn("expected_allocs=5 traced_allocs=5 expected_frees=2 traced_frees=2 "
                      "expected_bytes=4788 traced_bytes=4788 dropped=0", out)
        self.assertIn("kind=device_static allocs=1", out)   # the listed extra

    def test_pass_out_of_order_file(self):
        t, s = base_case()
        mid = t.ev[3:-1]
        mid.reverse()   # events are not written in time order
        t.ev = t.ev[:3] + mid + t.ev[-1:]
        # B/E ts are distinct, so the reversal is harmless after sorting
        self.assertPass(t, s)

    def test_pass_color_int(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == "reg")[0][0][T.ARGS][F.COLOR] = 0xFF00FF00
        self.assertPass(t, s)

    # -- stream-ordered allocations from the API callbacks (--callbacks) ---
    def callbacks_case(self, thread=PID):
        """base_case with its allocations and frees as the callbacks record
        them: thread and driver API in the event, a corr no API event has, no
        pool args (module globals stay CUPTI's)."""
        t, s = base_case()
        alloc, free = EV.ALLOC.name, EV.FREE.name
        driver = {(alloc, KIND.DEVICE, False): "cuMemAlloc_v2",
                  (free, KIND.DEVICE, False): "cuMemFree_v2",
                  (alloc, KIND.DEVICE, True): "cuMemAllocAsync",
                  (free, KIND.DEVICE, True): "cuMemFreeAsync",
                  (alloc, KIND.PINNED_HOST, False): "cuMemAllocHost_v2",
                  (free, KIND.PINNED_HOST, False): "cuMemFreeHost"}
        for x in find(t, lambda e: e.get(T.CAT) == CAT.MEMORY and e.get(T.NAME) in (alloc, free)
                      and e[T.ARGS][F.KIND] != KIND.DEVICE_STATIC):
            e = x[0]
            a = e[T.ARGS]
            for k in (F.POOL, F.POOL_TYPE, F.POOL_SIZE, F.POOL_USED):
                a.pop(k, None)
            a.update({F.THREAD: thread if a[F.KIND] != KIND.PINNED_HOST else TID2,
                      F.CORR: a[F.CORR] + 10000, F.API: driver[(e[T.NAME], a[F.KIND], a[F.ASYNC])]})
        return t, s

    def test_callbacks_pass(self):
        t, s = self.callbacks_case()
        rc, out = self.run_checker(t, s, ["--callbacks"])
        self.assertEqual(rc, 0, out)
        self.assertIn("RESULT synthetic.callbacks PASS", out)

    def test_callbacks_wrong_thread(self):
        t, s = self.callbacks_case(thread=TID2)
        rc, out = self.run_checker(t, s, ["--callbacks"])
        self.assertEqual(rc, 1, out)
        self.assertIn("CHECK attribution FAIL", out)

    def test_callbacks_without_flag(self):
        # the pool args and the API event are required without --callbacks
        t, s = self.callbacks_case()
        self.assertFail(t, s, "attribution")

    # -- memory ------------------------------------------------------------
    def test_missing_free(self):
        t, s = base_case()
        drop(t, lambda e: e.get(T.NAME) == EV.FREE.name and e[T.ARGS][F.ADDR] == "0x3000")
        self.assertFail(t, s, "addresses")

    def test_wrong_bytes(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == EV.ALLOC.name and e[T.ARGS][F.ADDR] == "0x2000")[0][0][
            T.ARGS][F.BYTES] = 512
        self.assertFail(t, s, "addresses")

    def test_wrong_kind(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == EV.ALLOC.name and e[T.ARGS][F.ADDR] == "0x2000")[0][0][
            T.ARGS][F.KIND] = KIND.MANAGED
        self.assertFail(t, s, "addresses")

    def test_free_before_alloc(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == EV.FREE.name and
             e[T.ARGS][F.ADDR] == "0x1000")[0][1] = 50
        out = self.assertFail(t, s, "addresses")
        self.assertIn("CHECK running_sum FAIL", out)

    def test_extra_device_alloc_fails(self):
        t, s = base_case()
        t.ev.insert(5, [{T.PH: "i", T.NAME: EV.ALLOC.name, T.PID: GPU, T.TID: 0, T.CAT: CAT.MEMORY,
                         T.S: "t", T.ARGS: {F.ADDR: "0xabc000", F.BYTES: 1, F.KIND: KIND.DEVICE,
                                            F.DEVICE: 0, F.STREAM: -1, F.CORR: 1,
                                            F.ASYNC: False}}, 10, None])
        self.assertFail(t, s, "extras")

    def test_extra_unused_kind_tolerated(self):
        t, s = base_case()
        t.ev.insert(5, [{T.PH: "i", T.NAME: EV.ALLOC.name, T.PID: GPU, T.TID: 0, T.CAT: CAT.MEMORY,
                         T.S: "t", T.ARGS: {F.ADDR: "0xabc000", F.BYTES: 1, F.KIND: KIND.MANAGED,
                                            F.DEVICE: 0, F.STREAM: -1, F.CORR: 1,
                                            F.ASYNC: False}}, 10, None])
        self.assertPass(t, s)

    def test_teardown_free_fails(self):
        t, s = base_case()
        t.mem(EV.FREE, 0x2000, 50, KIND.DEVICE, 19000, t.api("cudaFree", PID, 18900))
        t.ev.append(t.ev.pop(len(t.ev) - 3))   # gpuprof.end stays last
        self.assertFail(t, s, "addresses")

    def test_counter_final_wrong(self):
        t, s = base_case()
        cs = find(t, lambda e: e.get(T.NAME) == EV.GPU_MEMORY.name)
        cs[-1][0][T.ARGS][F.DEVICE] = 0
        self.assertFail(t, s, "counter")

    def test_counter_sorted_by_ts(self):
        t, s = base_case()
        cs = find(t, lambda e: e.get(T.NAME) == EV.GPU_MEMORY.name)
        cs[0][1], cs[-1][1] = cs[-1][1], cs[0][1]   # last event in file is not the last in time
        self.assertFail(t, s, "counter")

    def test_wrong_stream_tid(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == EV.ALLOC.name and e[T.ARGS][F.ADDR] == "0x3000")[0][0][
            T.TID] = 0
        self.assertFail(t, s, "attribution")

    def test_api_on_wrong_thread(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == "cudaMallocHost")[0][0][T.TID] = PID
        self.assertFail(t, s, "attribution")

    def test_sample_summary_inconsistent(self):
        t, s = base_case()
        s = [l.replace("live_end=80 ", "live_end=81 ") for l in s]
        self.assertFail(t, s, "sample_summary")

    def test_empty_story_fails(self):
        # a sample that logged nothing: no trace can disagree with it, so
        # the check must fail rather than pass on nothing
        t, s = base_case()
        s = [l for l in s if l.startswith(("GPUPROF_BEGIN", "GPUPROF_END", "GPUPROF_EXPECT exit"))]
        out = self.assertFail(t, s, "sample")
        self.assertIn("nothing to check", out)

    # -- nvtx --------------------------------------------------------------
    def test_bad_nesting(self):
        t, s = base_case()
        # the inner range ends after the outer one: swap the two E events' times
        es = find(t, lambda e: e.get(T.PH) == "E" and e.get(T.TID) == PID)
        es[0][1], es[1][1] = 6800, 7100
        bs = find(t, lambda e: e.get(T.NAME) == "outer")
        bs[0][1] = 960   # and outer starts after the hostile one
        self.assertFail(t, s, "nvtx_nesting")

    def test_wrong_name(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == HOSTILE_DECODED)[0][0][T.NAME] = \
            HOSTILE.decode("latin-1")
        self.assertFail(t, s, "nvtx_nesting")

    def test_missing_pop(self):
        t, s = base_case()
        drop(t, lambda e: e.get(T.PH) == "E" and e.get(T.TID) == TID2)
        self.assertFail(t, s, "nvtx_nesting")

    def test_wrong_domain(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == "reg")[0][0][T.ARGS][F.DOMAIN] = "default"
        self.assertFail(t, s, "nvtx_nesting")

    def test_wrong_color(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == "reg")[0][0][T.ARGS][F.COLOR] = "0xff00ff01"
        self.assertFail(t, s, "nvtx_nesting")

    def test_end_on_wrong_thread(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.PH) == "e")[0][0][T.TID] = PID
        self.assertFail(t, s, "nvtx_start_end")

    def test_end_unpaired(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.PH) == "e")[0][0][T.ID] = 78
        self.assertFail(t, s, "nvtx_start_end")

    def test_alloc_outside_range(self):
        t, s = base_case()
        c = find(t, lambda e: e.get(T.NAME) == EV.ALLOC.name and
                 e[T.ARGS][F.ADDR] == "0x2000")[0][0][T.ARGS][F.CORR]
        find(t, lambda e: e.get(T.PH) == "X" and e.get(T.ARGS, {}).get(F.CORR) == c)[0][1] = 7000
        self.assertFail(t, s, "nvtx_allocs")

    def test_missing_mark(self):
        t, s = base_case()
        drop(t, lambda e: e.get(T.PH) == "i" and e.get(T.CAT) == CAT.NVTX)
        self.assertFail(t, s, "nvtx_marks")

    # -- dropped, end, framing -----------------------------------------------
    def test_dropped_cupti(self):
        t, s = base_case()
        end_args(t)[F.DROPPED_CUPTI] = 3
        self.assertFail(t, s, "dropped")

    def test_dropped_host(self):
        t, s = base_case()
        end_args(t)[F.DROPPED_HOST] = 1
        self.assertFail(t, s, "dropped")

    def test_dropped_event(self):
        t, s = base_case()
        t.ev.insert(4, [{T.PH: "i", T.S: "g", T.NAME: EV.DROPPED.name, T.PID: PID, T.TID: PID,
                         T.ARGS: {F.WHAT: "cupti", F.COUNT: 5}}, 5000, None])
        self.assertFail(t, s, "dropped")

    def test_truncated_gzip(self):
        t, s = base_case()
        tp = os.path.join(self.dir, "t.json.gz")
        sp = os.path.join(self.dir, "s.stdout")
        data = gzip.compress(t.text().encode())
        with open(tp, "wb") as f:
            f.write(data[:len(data) // 2])
        with open(sp, "w") as f:
            f.write("\n".join(s) + "\n")
        p = subprocess.run([sys.executable, CHECKER, tp, sp, "--allow-recovered"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("TRUNCATED", p.stdout)
        self.assertIn("CHECK gzip FAIL", p.stdout)
        self.assertIn("RESULT synthetic FAIL", p.stdout)

    def test_missing_trailer_only(self):
        # all the data is there, only the 8-byte gzip trailer is missing
        t, s = base_case()
        tp = os.path.join(self.dir, "t.json.gz")
        sp = os.path.join(self.dir, "s.stdout")
        with open(tp, "wb") as f:
            f.write(gzip.compress(t.text().encode())[:-8])
        with open(sp, "w") as f:
            f.write("\n".join(s) + "\n")
        p = subprocess.run([sys.executable, CHECKER, tp, sp],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("TRUNCATED", p.stdout)

    def test_no_end_event(self):
        t, s = base_case()
        t.ev.pop()
        self.assertFail(t, s, "end")

    def test_meta_not_first(self):
        t, s = base_case()
        t.ev[0], t.ev[1] = t.ev[1], t.ev[0]
        self.assertFail(t, s, "meta")

    def test_wrong_pid(self):
        t, s = base_case()
        s[0] = "GPUPROF_BEGIN sample=synthetic pid=999 format=1"
        self.assertFail(t, s, "meta")

    def test_ts_not_three_decimals(self):
        t, s = base_case()
        raw = t.text().replace('"%s": 0.950' % T.TS, '"%s": 0.95' % T.TS, 1)
        self.assertNotEqual(raw, t.text())
        self.assertFail(t, s, "events", raw=raw)

    def test_not_one_event_per_line(self):
        t, s = base_case()
        raw = t.text().replace('{"%s": "M"' % T.PH, '{\n"%s": "M"' % T.PH, 1)
        self.assertFail(t, s, "lines", raw=raw)

    def test_invalid_utf8_in_trace(self):
        t, s = base_case()
        tp = os.path.join(self.dir, "t.json.gz")
        sp = os.path.join(self.dir, "s.stdout")
        raw = t.text().encode("utf-8").replace(b'"reg"', b'"r\xffg"', 1)
        with open(tp, "wb") as f:
            f.write(gzip.compress(raw))
        with open(sp, "w") as f:
            f.write("\n".join(s) + "\n")
        p = subprocess.run([sys.executable, CHECKER, tp, sp],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("CHECK utf8 FAIL", p.stdout)

    def test_duplicate_key(self):
        t, s = base_case()
        raw = t.text().replace('"%s": "outer"' % T.NAME,
                               '"{0}": "outer", "{0}": "x"'.format(T.NAME), 1)
        self.assertFail(t, s, "lines", raw=raw)

    def test_recovered_needs_flag(self):
        t, s = base_case()
        end_args(t).update({F.CLEAN: False, F.RECOVERED: True})
        self.assertFail(t, s, "end")
        self.assertPass(t, s, ["--allow-recovered"])

    def test_unclean(self):
        t, s = base_case()
        end_args(t).update({F.CLEAN: False})
        self.assertFail(t, s, "end")

    def test_sample_did_not_finish(self):
        t, s = base_case()
        s = [l for l in s if not l.startswith("GPUPROF_END")]
        self.assertFail(t, s, "sample")

    # -- oom / ops ---------------------------------------------------------
    def test_oom_wrong_bytes(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == EV.OOM.name)[0][0][T.ARGS][F.BYTES] = TOTAL
        self.assertFail(t, s, "oom")

    def test_oom_missing_free_total(self):
        t, s = base_case()
        del find(t, lambda e: e.get(T.NAME) == EV.OOM.name)[0][0][T.ARGS][F.FREE]
        self.assertFail(t, s, "oom")

    def test_oom_driver_api_name_accepted(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.NAME) == EV.OOM.name)[0][0][T.ARGS][F.API] = "cuMemAlloc_v2"
        out = self.assertPass(t, s)
        self.assertIn("NOTE cudaMalloc(", out)

    def test_memcpy_missing(self):
        t, s = base_case()
        drop(t, lambda e: e.get(T.CAT) == EV.MEMCPY.cat)
        self.assertFail(t, s, "ops")

    def test_memset_wrong_bytes(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.CAT) == EV.MEMSET.cat)[0][0][T.ARGS][F.BYTES] = 65
        self.assertFail(t, s, "ops")

    def test_kernel_flow_missing(self):
        t, s = base_case()
        drop(t, lambda e: e.get(T.PH) == "f")
        self.assertFail(t, s, "ops_attribution")

    def test_memcpy_async_flag(self):
        t, s = base_case()
        find(t, lambda e: e.get(T.CAT) == EV.MEMCPY.cat)[0][0][T.ARGS][F.ASYNC] = True
        self.assertFail(t, s, "ops_attribution")

    # -- killed ------------------------------------------------------------
    def killed_case(self):
        t = Trace()
        s = ["GPUPROF_BEGIN sample=synthetic pid=%d format=1" % PID,
             "GPUPROF_EXPECT exit=killed"]
        t.add("i", EV.META.name, PID, PID, 0, scope="g", args={
            F.FORMAT: FORMAT, F.VERSION: "0.1.0", F.PID: PID, F.PPID: 1, F.CMDLINE: "k",
            F.HOSTNAME: "h", F.START_UNIX_NS: 1, F.TS_BASE_NS: 1, F.CLOCK: "cupti",
            F.MODE: "cuda", F.GPU_PID_BASE: GPU})
        t.add("i", EV.DEVICE.name, GPU, 0, 1, scope="g", args={
            F.DEVICE: 0, F.NAME: "H100", F.TOTAL_MEMORY: TOTAL, F.UUID: "u", F.CC: "9.0",
            F.GPU_PID: GPU})
        live = 0
        for i in range(5):
            addr = 0x10000 * (i + 1)
            c = t.api("cudaMalloc", PID, 1000 + i * 10**8)
            t.mem(EV.ALLOC, addr, 100 + i, KIND.DEVICE, 1100 + i * 10**8, c)
            live += 100 + i
            t.add("C", EV.GPU_MEMORY.name, GPU, 0, 1100 + i * 10**8, cat=CAT.MEMORY, args={
                F.DEVICE: live, F.DEVICE_STATIC: 0, F.MANAGED: 0, F.PINNED_HOST: 0,
                F.POOL_RESERVED: 0})
            s.append("GPUPROF_ALLOC seq=%d t_ms=%d tid=%d device=0 kind=device api=cudaMalloc "
                     "addr=0x%x bytes=%d" % (i + 1, i * 100, PID, addr, 100 + i))
        s.append("GPUPROF_EXPECT kind=device allocs=5 frees=0 alloc_bytes=510 free_bytes=0 "
                 "live_end=510 t_ms=400")
        s.append("GPUPROF_KILL t_ms=2500 signal=9")
        t.add("i", EV.END.name, PID, PID, 10**9, scope="g", args={
            F.CLEAN: False, F.RECOVERED: True, F.DROPPED_CUPTI: 0, F.DROPPED_HOST: 0})
        return t, s

    def test_killed_pass(self):
        t, s = self.killed_case()
        self.assertPass(t, s, ["--allow-recovered"])

    def test_killed_needs_flag(self):
        t, s = self.killed_case()
        self.assertFail(t, s, "end")

    def test_killed_not_recovered(self):
        t, s = self.killed_case()
        end_args(t).update({F.RECOVERED: False})
        self.assertFail(t, s, "end", ["--allow-recovered"])

    def test_killed_late_op_may_be_missing(self):
        t, s = self.killed_case()
        s[-1] = "GPUPROF_KILL t_ms=1800 signal=9"   # ops at t_ms 400 are within 1.5 s
        drop(t, lambda e: e.get(T.NAME) == EV.ALLOC.name and e[T.ARGS][F.ADDR] == "0x50000")
        drop(t, lambda e: e.get(T.NAME) == EV.GPU_MEMORY.name and e[T.ARGS][F.DEVICE] == 510)
        out = self.assertPass(t, s, ["--allow-recovered"])
        self.assertIn("NOTE 1 operations done less than", out)

    def test_killed_early_op_missing(self):
        t, s = self.killed_case()
        drop(t, lambda e: e.get(T.NAME) == EV.ALLOC.name and e[T.ARGS][F.ADDR] == "0x10000")
        self.assertFail(t, s, "addresses", ["--allow-recovered"])


class ParseTest(unittest.TestCase):
    def test_hex_names_decode_with_replacement(self):
        sys.path.insert(0, HERE)
        import check_trace
        p = os.path.join(tempfile.mkdtemp(), "s")
        with open(p, "w") as f:
            f.write("GPUPROF_NVTX thread=0 tid=1 n=0 op=push name_hex=%s\n" % HOSTILE.hex())
        s = check_trace.parse_sample(p)
        self.assertEqual(s.nvtx[0][0]["name"], HOSTILE_DECODED)
        self.assertEqual(HOSTILE_DECODED.count("\ufffd"), 2)


if __name__ == "__main__":
    unittest.main(verbosity=1)
