"""check_native.py (the GPU suite's check of native-mode traces) on made-up
inputs, on any machine: a stand-in `gpuprof` prints a prepared analyze
report, and the checker must pass the good cases and fail each bad one,
saying so: a peak off by one byte, too little attributed, no stacks, a leak
at another rate or line, an OOM at another batch or size, nothing to check;
unusable input exits 2.

  python3 tests/torch/test_check_native.py

Exit 0 when every case came out as expected, 1 otherwise."""
import json
import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_native.py")
sys.path.insert(0, HERE)
import check_native  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
MAX_ALLOCATED = 3 * GiB + 12345
MAX_RESERVED = 4 * GiB
LEAK = 64 * MiB
REQUEST = 32 * GiB

FAKE = """#!/bin/sh
# stands in for gpuprof analyze: prints the report prepared beside it
d=$(dirname "$0")
[ "$1" = analyze ] || { echo "fake gpuprof: analyze only" >&2; exit 2; }
[ -f "$d/fail" ] && { echo "gpuprof: analyze: not a trace" >&2; exit 2; }
case " $* " in
*" --json "*) cat "$d/report.json" ;;
*) cat "$d/report.txt" ;;
esac
"""

SCRIPT = """import torch


class TinyLM(torch.nn.Module):
    def forward(self, tokens):
        x = self.embed(tokens)
        return self.lm_head(self.norm(x))
"""
SCRIPT_LINE = 7  # the line with "self.lm_head("

TEXT = """trace run.json.gz: process 7, native mode
GPU 0 of process 7: NVIDIA H100 80GB HBM3, 79.2 GiB
  Peak: 3.00 GiB allocated at 2.000 s

  Out of memory: 3 failed allocations
  #1 at 4.000 s, step 9, forward, in <MLP>.blocks.6.act: cudaMalloc of 32.0 GiB failed
    PyTorch: Tried to allocate 32.00 GiB (a block of 32.00 GiB); allocated 60.1 GiB
"""


def by_line(script_path):
    return [
        {"name": "leaky.py:%d in forward" % SCRIPT_LINE, "file": script_path,
         "line": SCRIPT_LINE, "function": "forward", "bytes": 5 * LEAK, "share": 0.9,
         "count": 5, "stack": ["leaky.py:%d in forward" % SCRIPT_LINE, "train.py:90 in main"],
         "library_frames": 3},
        {"name": "(no Python stack)", "file": None, "line": None, "function": None,
         "bytes": 10 * MiB, "share": 0.1, "count": 2, "stack": [], "library_frames": 0},
    ]


def by_line_as_text(script_path):
    """The other shape a by_line entry may have: line "file.py:42", no name."""
    out = by_line(script_path)
    for e in out:
        e["line"] = "leaky.py:%d" % e["line"] if e["line"] else None
        e["allocations"] = e.pop("count")
        del e["name"]
    return out


def good_doc(script_path):
    live = 2 * GiB
    peak = {
        "what": "allocated", "bytes": MAX_ALLOCATED, "t": 2.0, "step": 3, "phase": "backward",
        "layer": "<TinyLM>.lm_head", "other": 0, "device_total": MAX_RESERVED,
        "device_static": 0, "reserved": MAX_RESERVED,
        "live_bytes": live, "live_allocations": 40,
        "by_category": [
            {"category": "activations", "bytes": live - 300 * MiB, "share": 0.85, "count": 20},
            {"category": "parameters", "bytes": 200 * MiB, "share": 0.1, "count": 10},
            {"category": "other", "bytes": 100 * MiB, "share": 0.05, "count": 10,
             "by": [{"name": "cuMemAlloc", "bytes": 100 * MiB, "share": 0.05, "count": 10}]},
        ],
        # of PyTorch's bytes (the peak's); the other 100 MiB are cuMemAlloc's
        "attributed": {"bytes": MAX_ALLOCATED, "layer": MAX_ALLOCATED - 20 * MiB,
                       "line": MAX_ALLOCATED // 2, "either": MAX_ALLOCATED - 10 * MiB},
        "by_line": by_line(script_path),
        "by_layer": [], "by_phase": [], "by_op": None, "by_api": [], "top": [],
    }
    leak = {
        "verdict": "leak", "warmup_steps": 3, "points": 10, "since_step": 4, "last_step": 10,
        "rate_per_step": float(LEAK), "rate_per_second": 1e9, "r2": 1.0, "grew": 6,
        "shrank": 0, "flat": 0, "live_first": GiB, "live_last": GiB + 6 * LEAK,
        "steps_until_full": 1250,
        "survivors": {
            "from_step": 5, "to_step": 9, "bytes": 5 * LEAK, "per_step": float(LEAK),
            "allocations": 5,
            "by_layer": [{"name": "<TinyLM>", "bytes": 5 * LEAK, "share": 1.0, "count": 5,
                          "children": [{"name": "lm_head", "bytes": 5 * LEAK, "share": 1.0,
                                        "count": 5}]}],
            "by_phase": [], "by_op": None, "by_line": by_line(script_path),
        },
    }
    oom_raised = {
        "t": 4.0, "step": 9, "phase": "forward", "layer": "<MLP>.blocks.6.act", "op": None,
        "api": "cudaMalloc", "tid": 1, "request": REQUEST, "result": 2, "detailed": True,
        "pytorch": {"request": REQUEST, "block": REQUEST, "allocated": 60 * GiB,
                    "reserved": 61 * GiB, "free": 10 * GiB},
        "raised": True, "advice": [],
    }
    oom_retried = dict(oom_raised, pytorch=None, raised=False, request=16 * GiB)
    device = {
        "pid": 7, "trace": 0, "device": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-0",
        "capacity": 80 * GiB, "mode": "native",
        "summary": {
            "allocated": {"known": True, "end": GiB, "peak": MAX_ALLOCATED, "peak_t": 2.0,
                          "source": "blocks"},
            "reserved": {"known": True, "end": GiB, "peak": MAX_RESERVED, "peak_t": 2.0,
                         "source": "segments"},
        },
        "peak": peak, "steps": {"count": 10, "stride": 1, "series": []}, "leak": leak,
        "ooms": [oom_retried, oom_raised], "oom_count": 2,
    }
    trace = {"path": "run.json.gz", "pid": 7, "mode": "native",
             "allocator_hook": {"attached": True, "stacks": True, "why": None,
                                "allocated_before": 0, "reserved_before": 0}}
    return {"schema": "gpuprof.analyze/1", "traces": [trace], "devices": [device], "gpus": []}


def expect_line(**over):
    kv = {"script": "batch_doubling", "variant": "-", "backend": "native",
          "max_allocated": MAX_ALLOCATED, "max_reserved": MAX_RESERVED,
          "end_allocated": 0, "leak_per_step": LEAK, "failed_batch": 2048, "fit_batch": 1024,
          "tried": "32.00GiB"}
    kv.update(over)
    return "some output\nGPUPROF_TORCH_EXPECT %s\n" % " ".join("%s=%s" % i for i in kv.items())


class Cases:
    def __init__(self, tmp):
        self.tmp = tmp
        self.fake = os.path.join(tmp, "gpuprof")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IXUSR)
        self.script = os.path.join(tmp, "leaky.py")
        with open(self.script, "w") as f:
            f.write(SCRIPT)
        self.failures = []
        self.count = 0

    def run(self, what, expect_rc, doc=None, text=TEXT, out=None, plain=None, args=(),
            analyze_fails=False, said=None):
        self.count += 1
        doc = good_doc(self.script) if doc is None else doc
        with open(os.path.join(self.tmp, "report.json"), "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        with open(os.path.join(self.tmp, "report.txt"), "w") as f:
            f.write(text)
        fail = os.path.join(self.tmp, "fail")
        if analyze_fails:
            open(fail, "w").close()
        elif os.path.exists(fail):
            os.remove(fail)
        stdout = os.path.join(self.tmp, "run.out")
        with open(stdout, "w") as f:
            f.write(expect_line() if out is None else out)
        argv = [sys.executable, CHECKER, self.fake, "run.json.gz", stdout, "--label", "case"]
        if plain is not None:
            path = os.path.join(self.tmp, "plain.out")
            with open(path, "w") as f:
                f.write(plain)
            args = list(args) + ["--oom", path]
        p = subprocess.run(argv + list(args), capture_output=True, text=True)
        lines = (p.stdout + p.stderr).strip().splitlines()
        if p.returncode != expect_rc:
            self.failures.append("%s: exit %d (expected %d): %s" % (what, p.returncode, expect_rc,
                                                                    " | ".join(lines[-4:])))
        elif expect_rc and not any(l.startswith("RESULT case FAIL") for l in lines):
            self.failures.append("%s: exit %d without a RESULT ... FAIL line: %r" % (
                what, p.returncode, lines[-3:]))
        elif expect_rc == 0 and any("FAIL" in l for l in lines):
            self.failures.append("%s: passed with a FAIL line: %r" % (what, lines))
        elif said and not any(said in l for l in lines):
            self.failures.append("%s: %r not said: %r" % (what, said, lines))


def mutated(script, fn):
    d = good_doc(script)
    fn(d)
    return d


SIZES = ((0, "0 bytes"), (1024, "1024 bytes"), (1025, "1.00 KiB"), (1 << 20, "1024.00 KiB"),
         ((1 << 20) + 1, "1.00 MiB"), (20 * MiB, "20.00 MiB"), (1 << 30, "1024.00 MiB"),
         (REQUEST, "32.00 GiB"), (9932111872, "9.25 GiB"), (14170456064, "13.20 GiB"))


def main():
    # c10's format_size: its bounds are inclusive
    failures = ["format_size(%d) = %r, not %r" % (n, check_native.format_size(n), want)
                for n, want in SIZES if check_native.format_size(n) != want]
    with tempfile.TemporaryDirectory() as tmp:
        c = Cases(tmp)
        s = c.script
        leak_args = ["--stacks", "--leak", s + ":self.lm_head("]
        good_plain = expect_line()

        c.run("good: peak and attribution", 0)
        c.run("good: with stacks", 0, args=["--stacks"])
        c.run("good: leak", 0, args=leak_args)
        c.run("good: OOM", 0, plain=good_plain)
        c.run("good: everything", 0, args=leak_args, plain=good_plain)
        c.run("good: a GPUPROF_TORCH line", 0,
              out="GPUPROF_TORCH model=gpt2 steps=4 max_allocated=%d max_reserved=%d "
              "backend=native\n" % (MAX_ALLOCATED, MAX_RESERVED))

        def nested(d):  # the Set's members in a `set` object
            p = d["devices"][0]["peak"]
            p["set"] = {k: p.pop(k) for k in ("live_bytes", "live_allocations", "by_category",
                                              "attributed", "by_line")}

        c.run("good: a nested set", 0, doc=mutated(s, nested), args=["--stacks"])

        def off(what, delta):
            return lambda d: d["devices"][0]["summary"][what].__setitem__(
                "peak", d["devices"][0]["summary"][what]["peak"] + delta)

        c.run("allocated peak one byte over", 1, doc=mutated(s, off("allocated", 1)), said="+1 B")
        c.run("allocated peak one byte under", 1, doc=mutated(s, off("allocated", -1)))
        c.run("reserved peak off", 1, doc=mutated(s, off("reserved", 2 * MiB)))
        c.run("allocated from marks, not blocks", 1, doc=mutated(
            s, lambda d: d["devices"][0]["summary"]["allocated"].update(source="torch marks")))
        c.run("allocated not known", 1, doc=mutated(
            s, lambda d: d["devices"][0]["summary"]["allocated"].update(known=False, peak=None)))
        c.run("hook not attached", 1, said="no compiler", doc=mutated(
            s, lambda d: d["traces"][0]["allocator_hook"].update(attached=False,
                                                                 why="no compiler")))
        c.run("no allocator_hook (not native)", 1, doc=mutated(
            s, lambda d: d["traces"][0].update(mode="tensor", allocator_hook=None)))
        c.run("stacks asked, recorded without", 1, args=["--stacks"], doc=mutated(
            s, lambda d: d["traces"][0]["allocator_hook"].update(stacks=False)))

        def attributed(percent):
            def fn(d):
                p = d["devices"][0]["peak"]
                p["attributed"]["either"] = -(-p["attributed"]["bytes"] * percent // 100)
            return fn

        c.run("94% attributed", 1, doc=mutated(s, attributed(94)), said="94.00%")
        c.run("95% attributed", 0, doc=mutated(s, attributed(95)))
        c.run("attributed of other than the peak's bytes", 1, doc=mutated(
            s, lambda d: d["devices"][0]["peak"]["attributed"].update(bytes=MAX_ALLOCATED - 1)),
              said="not the peak's")

        def uncategorized(d):
            d["devices"][0]["peak"]["by_category"][0]["bytes"] -= 1

        c.run("a byte without a category", 1, doc=mutated(s, uncategorized))
        c.run("an unknown category", 1, doc=mutated(
            s, lambda d: d["devices"][0]["peak"]["by_category"][1].update(category="weights")))
        c.run("no attributed member", 1, doc=mutated(
            s, lambda d: d["devices"][0]["peak"].pop("attributed")))
        c.run("by_line null with --stacks", 1, args=["--stacks"], doc=mutated(
            s, lambda d: d["devices"][0]["peak"].__setitem__("by_line", None)))
        c.run("by_line without a line", 1, args=["--stacks"], doc=mutated(
            s, lambda d: d["devices"][0]["peak"].__setitem__("by_line", by_line(s)[1:])))
        c.run("by_line null without --stacks", 0, doc=mutated(
            s, lambda d: d["devices"][0]["peak"].__setitem__("by_line", None)))

        c.run("leak rate off", 1, args=leak_args, out=expect_line(leak_per_step=LEAK + 1))
        c.run("leak rate fractional", 1, args=leak_args, doc=mutated(
            s, lambda d: d["devices"][0]["leak"].__setitem__("rate_per_step", LEAK + 0.5)))

        def as_text(d):
            d["devices"][0]["peak"]["by_line"] = by_line_as_text(s)
            d["devices"][0]["leak"]["survivors"]["by_line"] = by_line_as_text(s)

        c.run("good: lines as text", 0, args=leak_args, doc=mutated(s, as_text))

        def line_at(n, text=False):
            def fn(d):
                if text:
                    as_text(d)
                e = d["devices"][0]["leak"]["survivors"]["by_line"][0]
                e["line"] = "leaky.py:%d" % n if text else n
            return fn

        c.run("leak at the wrong line", 1, args=leak_args, doc=mutated(s, line_at(SCRIPT_LINE - 1)),
              said="leaky.py:%d" % (SCRIPT_LINE - 1))
        c.run("leak at the wrong line, as text", 1, args=leak_args,
              doc=mutated(s, line_at(SCRIPT_LINE + 1, text=True)))

        def other_file(d):
            d["devices"][0]["leak"]["survivors"]["by_line"][0]["file"] = "/elsewhere/leaky.py"

        c.run("leak in another file of the same name", 1, args=leak_args,
              doc=mutated(s, other_file))

        def no_line_first(d):
            bl = d["devices"][0]["leak"]["survivors"]["by_line"]
            bl[1]["bytes"] = bl[0]["bytes"] + 1

        c.run("leak's largest entry has no line", 1, args=leak_args, doc=mutated(s, no_line_first))

        def other_layer(d):
            d["devices"][0]["leak"]["survivors"]["by_layer"][0]["children"][0]["name"] = "blocks"

        c.run("leak in another layer", 1, args=leak_args, doc=mutated(s, other_layer))
        c.run("no leak", 1, args=leak_args, doc=mutated(
            s, lambda d: d["devices"][0]["leak"].update(verdict="none", survivors=None)),
            said="nothing to check")

        c.run("OOM batch differs unprofiled", 1, plain=expect_line(failed_batch=4096))
        c.run("tried text differs", 1, out=expect_line(tried="31.99GiB"), plain=good_plain)
        c.run("text report lacks Tried to allocate", 1, plain=good_plain,
              text=TEXT.replace("Tried to allocate", "asked for"))
        c.run("Tried to allocate outside the OOM section", 1, plain=good_plain,
              text="  note: Tried to allocate 32.00 GiB\n"
              + TEXT.replace("Tried to allocate", "asked"))
        c.run("OOM not raised", 1, plain=good_plain, doc=mutated(
            s, lambda d: d["devices"][0]["ooms"][1].__setitem__("raised", False)))
        c.run("no OOM", 1, plain=good_plain, doc=mutated(
            s, lambda d: d["devices"][0].update(ooms=[], oom_count=0)), said="nothing to check")

        c.run("no device", 1, doc=mutated(s, lambda d: d.__setitem__("devices", [])),
              said="nothing to check")
        c.run("no peak", 1, doc=mutated(s, lambda d: d["devices"][0].__setitem__("peak", None)),
              said="nothing to check")

        c.run("unusable: no GPUPROF line", 2, out="it crashed\n")
        c.run("unusable: analyze fails", 2, analyze_fails=True, said="not a trace")
        c.run("unusable: not JSON", 2, doc="gpuprof: oops")
        c.run("unusable: another schema", 2, doc=mutated(s, lambda d: d.update(schema="x/2")))
        c.run("unusable: pattern on no line", 2, args=["--leak", s + ":self.nothing("])
        c.run("unusable: no tried= for --oom", 2, plain=good_plain,
              out=expect_line().replace(" tried=32.00GiB", ""))
        c.run("unusable: plain run without its line", 2, plain="Killed\n")
        failures += c.failures
        count = c.count + len(SIZES)
    for f in failures:
        print("FAIL " + f)
    print("%d passed, %d failed" % (count - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
