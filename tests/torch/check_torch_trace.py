"""Checks a gpuprof trace of tests/torch/train_models.py against what PyTorch
itself measured in the same run.

  check_torch_trace.py TRACE STDOUT --mode tensor|native [--kernels REF_STDOUT]

tensor: the peak of live tensor bytes (async device allocations, in ts
order) equals torch.cuda.max_memory_allocated() within 0.5%.
native: the peak of live 2 MiB-multiple device segments (PyTorch's caching
allocator rounds every segment to 2 MiB) equals max_memory_reserved() within
0.5%; the other allocations live at that peak are named by API.
Both: >= 99% of the bytes live at the peak are inside a module range (fwd:/
bwd:), a phase, or were allocated before the first forward; module, phase and
step ranges are present; nothing was dropped; with --kernels, the kernels
launched in each timed step equal torch.profiler's count for that step.
Prints RESULT lines; exit 0/1."""
import argparse
import bisect
import gzip
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "exporters"))
from trace_format import CAT, EV, F, T  # noqa: E402  (the names of the trace)

TOL = 0.005


def kv(line):
    return dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("stdout")
    ap.add_argument("--mode", required=True, choices=["tensor", "native"])
    ap.add_argument("--kernels")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    torch_line = [l for l in open(a.stdout) if l.startswith("GPUPROF_TORCH ")]
    if not torch_line:
        print("RESULT %s FAIL no GPUPROF_TORCH line" % a.label)
        return 1
    t = kv(torch_line[-1])
    ev = json.load(gzip.open(a.trace, "rt", encoding="utf-8"))
    ok = True
    notes = []
    meta = ev[0][T.ARGS]
    end = ev[-1]
    host = meta[F.PID]
    if meta.get(F.MODE) != a.mode:
        notes.append("meta mode %s" % meta.get(F.MODE))
        ok = False
    if end.get(T.NAME) != EV.END.name or end[T.ARGS].get(F.DROPPED_CUPTI) or end[T.ARGS].get(F.DROPPED_HOST):
        notes.append("end/dropped: %s" % end.get(T.ARGS))
        ok = False
    # how stream-ordered allocations were captured (tensor mode): patched
    # calls, and whether the driver callbacks stayed on
    for e in ev:
        if e.get(T.NAME) == EV.ALLOC_CAPTURE.name:
            c = e.get(T.ARGS) or {}
            notes.append("capture=patched:%s,left:%s,others:%s,driver_callbacks:%s%s" % (
                c.get(F.PATCHED), c.get(F.LEFT), c.get(F.OTHERS), c.get(F.DRIVER_CALLBACKS),
                ",first_unpatched:%s" % c[F.FIRST_UNPATCHED] if F.FIRST_UNPATCHED in c else ""))
    # which module calls the hooks used: compiled (gpuprof_call.c) or Python
    for e in ev:
        if e.get(T.CAT) == CAT.NVTX and e.get(T.NAME, "").startswith("gpuprof:torch {"):
            info = json.loads(e[T.NAME][len("gpuprof:torch "):])
            notes.append("calls=%s" % {True: "compiled", False: "python"}.get(info.get("compiled_calls"), "?"))
            break

    # module globals are recorded in both modes; CUPTI's memory records of
    # what the callbacks recorded (skipped, yet paid for) are counted
    statics = meta.get(F.STATICS)
    glob = sum(1 for e in ev if e.get(T.NAME) == EV.ALLOC.name and (e.get(T.ARGS) or {}).get(F.KIND) == "device_static")
    good = statics == "run" and glob > 0
    ok &= good
    notes.append("statics=%s,device_static=%d,skipped_memory_records=%s,bad_records=%s%s" % (
        statics, glob, end[T.ARGS].get(F.SKIPPED_MEMORY_RECORDS), end[T.ARGS].get(F.BAD_RECORDS),
        "" if good else ",WRONG"))

    order = sorted(range(len(ev)), key=lambda i: (ev[i].get(T.TS, 0), i))
    api = {}  # corr -> (tid, ts, API name)
    for e in ev:
        if e.get(T.CAT) in (CAT.CUDA_RUNTIME, CAT.CUDA_DRIVER) and e[T.PH] == "X":
            api[e[T.ARGS][F.CORR]] = (e[T.TID], e[T.TS], e[T.NAME])

    def caller(ar):
        """(thread, API name) of an allocation or free: the event's own
        (tensor mode: recorded by the callbacks or in the patched call, its
        corr no API event's), else its API event's, found by corr."""
        if F.THREAD in ar:
            return ar[F.THREAD], ar.get(F.API, "?")
        tid_ts = api.get(ar.get(F.CORR))
        return (tid_ts[0], tid_ts[2]) if tid_ts else (None, "no-api")

    # ranges per thread, in ts order
    fwd_first = None
    steps = []
    phase_open = 0
    names = defaultdict(int)
    # interval lists for attribution
    thread_events = defaultdict(list)  # tid -> [(ts, kind, name)]
    phase_events = []
    for i in order:
        e = ev[i]
        if e.get(T.CAT) != CAT.NVTX:
            continue
        n = e.get(T.NAME, "")
        if e[T.PH] == "B":
            names[n.split(":")[0]] += 1
            if n.startswith("fwd:") and fwd_first is None:
                fwd_first = e[T.TS]
            thread_events[e[T.TID]].append((e[T.TS], "B", n))
            if n.startswith("phase:"):
                phase_events.append((e[T.TS], +1))
        elif e[T.PH] == "E":
            thread_events[e[T.TID]].append((e[T.TS], "E", ""))
        elif e[T.PH] == "b" and n.startswith("bwd:"):
            names["bwd"] += 1
            thread_events[e[T.TID]].append((e[T.TS], "b", n, e[T.ID]))
        elif e[T.PH] == "e":
            thread_events[e[T.TID]].append((e[T.TS], "e", n, e[T.ID]))
        elif e[T.PH] == "i" and n.startswith("step:"):
            steps.append(e[T.TS])
    # phase intervals (across threads): pair B/E of phase ranges per thread
    phase_iv = []
    for tid, lst in thread_events.items():
        stack = []
        for item in lst:
            if item[1] == "B":
                stack.append((item[0], item[2]))
            elif item[1] == "E" and stack:
                s, n = stack.pop()
                if n.startswith("phase:"):
                    phase_iv.append((s, item[0]))
    phase_iv.sort()
    bwd_end = {}
    for lst in thread_events.values():
        for item in lst:
            if item[1] == "e":
                bwd_end[item[3]] = item[0]

    def in_phase(ts):
        return any(s <= ts <= e for s, e in phase_iv)

    def module_at(tid, ts):
        stack, bwd = [], {}
        for item in thread_events.get(tid, ()):
            if item[0] > ts:
                break
            if item[1] == "B":
                stack.append(item[2])
            elif item[1] == "E" and stack:
                stack.pop()
            elif item[1] == "b":
                bwd[item[3]] = item[2]
        # b/e ends can be on other threads: close by id
        bwd = {k: v for k, v in bwd.items() if bwd_end.get(k, float("inf")) > ts}
        mods = [n for n in stack if n.startswith("fwd:")]
        if mods:
            return mods[-1]
        if bwd:
            return list(bwd.values())[-1]
        return None

    # native mode: PyTorch's segments are those its allocator hook named as
    # they came (torch.segment_alloc), or, without the hook, those it named
    # at exit, and any device allocation freed before the end (PyTorch's
    # empty_cache); what stays to the end unnamed belongs to someone else
    # (cuBLAS, libraries)
    named_segs = set()
    for e in ev:
        if e.get(T.CAT) == CAT.NVTX and e.get(T.NAME, "").startswith("gpuprof:torch.segment "):
            named_segs.add(int(e[T.NAME].split()[1], 16))
        elif e.get(T.CAT) == CAT.MEMORY and e.get(T.NAME) == EV.TORCH_SEGMENT_ALLOC.name:
            named_segs.add(int(e[T.ARGS][F.ADDR], 16))
    freed = set(e[T.ARGS][F.ADDR] for e in ev if e.get(T.NAME) == EV.FREE.name and e.get(T.CAT) == CAT.MEMORY)

    def torch_seg(addr):
        return not named_segs or int(addr, 16) in named_segs or addr in freed

    if a.mode == "native" and not named_segs:
        notes.append("no gpuprof:torch.segment marks nor torch.segment_alloc events")
        ok = False
    # live memory in ts order
    want_async = a.mode == "tensor"
    def mem_events():
        for i in order:
            e = ev[i]
            if e.get(T.CAT) == CAT.MEMORY and e[T.PH] == "i" and e[T.NAME] in (EV.ALLOC.name, EV.FREE.name):
                yield e

    def counted(ar):
        """PyTorch's memory: tensors in tensor mode, segments in native mode."""
        if ar.get(F.KIND) != "device" or bool(ar.get(F.ASYNC)) != want_async:
            return False
        return a.mode != "native" or torch_seg(ar[F.ADDR])

    live = {}
    cur = peak = 0
    peak_ts = None
    for e in mem_events():
        ar = e[T.ARGS]
        if not counted(ar):
            continue
        if e[T.NAME] == EV.ALLOC.name:
            live[ar[F.ADDR]] = (ar[F.BYTES], e[T.TS], caller(ar)[0])
            cur += ar[F.BYTES]
            if cur > peak:
                peak, peak_ts = cur, e[T.TS]
        else:
            b = live.pop(ar[F.ADDR], None)
            if b:
                cur -= b[0]
    if peak_ts is None:
        # no allocation of PyTorch's in a training run: nothing to check
        print("RESULT %s FAIL mode=%s no PyTorch allocation in the trace (%s)" % (
            a.label, a.mode, "tensors" if a.mode == "tensor" else "named segments"))
        return 1
    # second pass to get the live set at the peak
    live = {}
    for e in mem_events():
        ar = e[T.ARGS]
        if not counted(ar):
            continue
        if e[T.TS] > peak_ts:
            break
        if e[T.NAME] == EV.ALLOC.name:
            live[ar[F.ADDR]] = (ar[F.BYTES], e[T.TS], caller(ar)[0])
        else:
            live.pop(ar[F.ADDR], None)
    peak_live = live
    ref = int(t["max_allocated"] if a.mode == "tensor" else t["max_reserved"])
    rel = abs(peak - ref) / ref if ref else 1.0
    if rel > TOL:
        ok = False
    # attribution of the bytes live at the peak
    attributed = 0
    by_layer = defaultdict(int)
    for addr, (b, ts, tid) in peak_live.items():
        who = None
        if fwd_first is not None and ts < fwd_first:
            who = "before first forward"
        else:
            if tid is not None:
                who = module_at(tid, ts)
            if who is None and in_phase(ts):
                who = "phase"
        if who:
            attributed += b
            by_layer[who] += b
    share = attributed / peak if peak else 0.0
    if share < 0.99:
        ok = False
    if names.get("fwd", 0) == 0 or names.get("bwd", 0) == 0 or names.get("phase", 0) == 0 or not steps:
        notes.append("ranges: %s steps=%d" % (dict(names), len(steps)))
        ok = False
    kern_msg = ""
    if a.kernels:
        rl = [l for l in open(a.kernels) if l.startswith("GPUPROF_TORCH ")]
        refk = [int(x) for x in kv(rl[-1])["kernels_per_step"].split(",")]
        launches = []
        for e in ev:
            if e.get(T.CAT) == CAT.KERNEL:
                c = e[T.ARGS].get(F.CORR)
                launches.append(api[c][1] if c in api else e[T.TS])
        launches.sort()
        n = len(refk)
        # the timed steps are the last n: between marks[-n-1] and marks[-1]
        if n == 0 or not any(refk):
            ok = False
            kern_msg = " kernels=torch.profiler counted no kernel: nothing to compare"
        elif len(steps) < n + 1:
            ok = False
            kern_msg = " kernels=too few step marks"
        else:
            ours = []
            for k in range(len(steps) - n, len(steps)):
                lo, hi = steps[k - 1], steps[k]
                ours.append(bisect.bisect_right(launches, hi) - bisect.bisect_right(launches, lo))
            same = ours == refk
            ok &= same
            kern_msg = " kernels_traced=%s kernels_torch_profiler=%s" % (
                ",".join(map(str, ours[:4])) + ("..." if n > 4 else ""),
                ",".join(map(str, refk[:4])) + ("..." if n > 4 else ""))
            if not same:
                kern_msg += " MISMATCH ours=%s ref=%s" % (ours, refk)
    # what else (not counted above) was live at the peak, by API and size
    others = defaultdict(int)
    lv = {}
    for e in mem_events():
        if e[T.TS] > peak_ts:
            break
        ar = e[T.ARGS]
        if e[T.NAME] == EV.ALLOC.name:
            lv[ar[F.ADDR]] = (ar[F.BYTES], ar.get(F.KIND), ar.get(F.ASYNC), caller(ar)[1])
        else:
            lv.pop(ar[F.ADDR], None)
    for addr, (b, kind, asy, apin) in lv.items():
        if addr in peak_live:
            continue
        others["%s/%s%s/%d" % (apin, kind, "/async" if asy else "", b)] += 1
    other_msg = " others=" + ",".join("%sx%d" % (k, n) for k, n in sorted(others.items())[:8])
    top = sorted(by_layer.items(), key=lambda x: -x[1])[:3]
    print("RESULT %s %s mode=%s peak_trace=%d torch_%s=%d diff=%.3f%% attributed=%.2f%% "
          "steps=%d fwd=%d bwd=%d phase=%d%s top=%s %s" % (
              a.label, "PASS" if ok else "FAIL", a.mode, peak,
              "max_allocated" if a.mode == "tensor" else "max_reserved", ref, rel * 100,
              share * 100, len(steps), names.get("fwd", 0), names.get("bwd", 0),
              names.get("phase", 0), kern_msg + other_msg,
              ";".join("%s=%.0fMiB" % (k, v / 2**20) for k, v in top), " ".join(notes)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
