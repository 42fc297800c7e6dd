"""profiler/python/gpuprof_history.py (--torch-history) without PyTorch:
the marks made from a history as torch.cuda.memory._snapshot() gives it,
anchored at the allocator's state at exit, and the queueing and failure
paths with a stand-in torch. Exit 0 pass, 1 fail."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "profiler", "python"))
import gpuprof_history as gh  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)


def entries(spec, t0=1_800_000_000_000_000):
    return [{"action": a, "size": s, "time_us": t0 + i * 3, "addr": 0, "stream": 0,
             "compile_context": "N/A", "user_metadata": ""} for i, (a, s) in enumerate(spec)]


def parse(text):
    prefix = "gpuprof:torch.history "
    check(text.startswith(prefix), "prefix")
    return json.loads(text[len(prefix):])


def points(texts):
    """(time_us, allocated, reserved) of all marks, as the analyzer reads them."""
    out = []
    for k, t in enumerate(texts):
        d = parse(gh.finish(t, 5))
        check(d["part"] == k and d["last"] == (k == len(texts) - 1), "part %d numbered" % k)
        check(d["unix_ns"] == 5, "unix_ns added by finish")
        p, t_us = d["p"], d["t0_us"]
        check(len(p) % 3 == 0, "whole points")
        for i in range(0, len(p), 3):
            t_us += p[i]
            out.append((t_us, p[i + 1], p[i + 2]))
    return out, [parse(gh.finish(t, 5))["complete"] for t in texts]


SPEC = ([("segment_alloc", 1000), ("alloc", 300), ("alloc", 200), ("free_requested", 300),
         ("free_completed", 300), ("oom", 5000), ("segment_alloc", 4000), ("alloc", 3000),
         ("free_requested", 3000), ("segment_free", 4000), ("free_requested", 200)] +
        [("alloc", 7), ("free_requested", 7)] * 50)
END = (0, 1000)  # the allocator's state after SPEC: one segment left


def test_complete():
    es = entries(SPEC)
    texts, problem = gh.marks(0, es, END, False)
    check(problem is None, "complete history adds up")
    pts, complete = points(texts)
    alloc = res = 0
    want = []
    for e in es:
        alloc += {"alloc": e["size"], "free_requested": -e["size"]}.get(e["action"], 0)
        res += {"segment_alloc": e["size"], "segment_free": -e["size"]}.get(e["action"], 0)
        # a new segment shows with the allocation that follows it
        if e["action"] in ("alloc", "free_requested", "segment_free"):
            want.append((e["time_us"], alloc, res))
    check(pts == want, "every change, exact: %r... vs %r..." % (pts[:4], want[:4]))
    check(all(complete), "complete")
    check(len(texts) == 1, "one mark")


def test_parts():
    saved = gh.MARK_BYTES
    gh.MARK_BYTES = 64
    try:
        texts, _ = gh.marks(3, entries(SPEC), END, False)
    finally:
        gh.MARK_BYTES = saved
    pts, _ = points(texts)
    full, _ = points(gh.marks(3, entries(SPEC), END, False)[0])
    check(len(texts) > 10, "cut into parts (%d)" % len(texts))
    check(pts == full, "the parts hold the same points")
    check(all(parse(gh.finish(t, 1))["device"] == 3 for t in texts), "device")
    big = entries([("alloc", 1 << 40), ("free_requested", 1 << 40)] * 20000)
    texts, _ = gh.marks(0, big, (0, 0), False)
    check(all(len(gh.finish(t, 1 << 62).encode()) <= 65535 for t in texts),
          "every mark fits the recorder's 65535 bytes")


def test_wrapped():
    es = entries(SPEC)
    full, _ = points(gh.marks(0, es, END, False)[0])
    # the ring dropped the first 4 entries: anchored at the state at exit
    texts, problem = gh.marks(0, es[4:], (0, 1000), True)
    pts, complete = points(texts)
    check(problem is None and pts == full[-len(pts):], "anchored at the end: the same values")
    check(not any(complete), "not complete")
    # started late: the allocator held 64 bytes before (state at exit 64)
    texts, _ = gh.marks(0, es, (64, 1000), False)
    pts, complete = points(texts)
    check(pts[0][1] == 64 + 300 and not any(complete), "what was held before the history is counted")


def test_segment_shown_with_its_allocation():
    pts, _ = points(gh.marks(0, entries([("segment_alloc", 100), ("alloc", 60), ("segment_alloc", 50)]),
                             (60, 150), False)[0])
    check([p[1:] for p in pts] == [(60, 100), (60, 150)],
          "no point between a segment and its allocation; a last segment still shown: %r" % pts)


def test_not_adding_up():
    texts, problem = gh.marks(1, entries([("alloc", 10)]), (5, 0), False)
    check(texts == [] and "does not add up" in (problem or ""), "refused: %r" % problem)


def test_state_at_end():
    segs = [{"device": 0, "total_size": 100, "blocks": [
        {"state": "active_allocated", "requested_size": 30, "size": 32},
        {"state": "active_pending_free", "requested_size": 20, "size": 20},
        {"state": "inactive", "requested_size": 0, "size": 48}]},
        {"device": 1, "total_size": 50, "blocks": [
            {"state": "active_allocated", "requested_size": 7, "size": 50}]}]
    check(gh.state_at_end(segs, 0) == (30, 100), "device 0: requested bytes of live blocks")
    check(gh.state_at_end(segs, 1) == (7, 50), "device 1")


class FakeTorch:
    """What History touches of torch."""

    def __init__(self, skip_ok=True, fail=None, traces=None, segments=()):
        t = self
        t.queued, t.calls = [], []

        class Memory:
            @staticmethod
            def _record_memory_history(**kw):
                if "skip_actions" in kw and not skip_ok:
                    raise TypeError("unexpected keyword argument 'skip_actions'")
                if fail:
                    raise fail
                t.calls.append(kw)

            @staticmethod
            def _snapshot():
                return {"device_traces": traces or [], "segments": list(segments)}

        class Cuda:
            memory = Memory

            @staticmethod
            def _lazy_call(fn):
                t.queued.append(fn)

        self.cuda = Cuda


def run_history(torch, env=None):
    said, marked = [], []
    h = gh.History(torch, said.append, marked.append, env=env or {})
    h.start()
    for fn in torch.queued:
        fn()
    h.write()
    return h, said, marked


def test_history_class():
    es = entries([("segment_alloc", 100), ("alloc", 30)])
    segs = [{"device": 0, "total_size": 100, "blocks": [{"state": "active_allocated", "requested_size": 30}]}]
    t = FakeTorch(traces=[es], segments=segs)
    h, said, marked = run_history(t)
    check(len(t.queued) == 1, "queued for CUDA's initialisation, not run at once")
    check(t.calls and t.calls[0]["context"] is None and t.calls[0]["enabled"] == "all" and
          t.calls[0]["skip_actions"] == ["free_completed"] and t.calls[0]["max_entries"] == gh.DEFAULT_ENTRIES,
          "recorded without stacks, completions skipped: %r" % t.calls)
    check(said == [] and len(marked) == 1 and parse(marked[0])["complete"], "one mark: %r %r" % (said, marked))
    # PyTorch before 2.10: no skip_actions
    t = FakeTorch(skip_ok=False, traces=[es], segments=segs)
    h, said, marked = run_history(t)
    check(t.calls and "skip_actions" not in t.calls[0] and len(marked) == 1, "without skip_actions")
    # a failure inside torch's initialisation is said, never raised
    t = FakeTorch(fail=RuntimeError("no history here"))
    h, said, marked = run_history(t)
    check(not h.on and len(said) == 1 and said[0].startswith("--torch-history:") and marked == [],
          "failure said in one line: %r" % said)
    # a full ring says so; the values are still exact
    t = FakeTorch(traces=[es], segments=segs)
    h, said, marked = run_history(t, {"GPUPROF_TORCH_HISTORY_ENTRIES": "2"})
    check(len(marked) == 1 and not parse(marked[0])["complete"] and "only the last 2" in " ".join(said),
          "full ring: %r" % said)
    for bad in ("0", "x", "-5", str(gh.MAX_ENTRIES + 1)):
        t = FakeTorch()
        h, said, marked = run_history(t, {"GPUPROF_TORCH_HISTORY_ENTRIES": bad})
        check(not t.queued and len(said) == 1 and "GPUPROF_TORCH_HISTORY_ENTRIES" in said[0],
              "entries %r refused: %r" % (bad, said))
    # a history that does not add up is not written
    t = FakeTorch(traces=[es], segments=[])
    h, said, marked = run_history(t)
    check(marked == [] and "does not add up" in " ".join(said), "not adding up: %r" % said)


def main():
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
    for f in FAILS:
        print("FAIL: " + f)
    print("all checks passed" if not FAILS else "%d check(s) failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
