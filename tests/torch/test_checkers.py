"""The PyTorch GPU checks on made-up traces, on any machine: each passes the
trace its story should leave, and fails, saying so, on a trace with nothing
to check (no steps, no ranges), so a run that recorded nothing cannot pass.
Exit 0 when every case came out as expected, 1 otherwise."""
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "exporters"))
from trace_format import EV, F, FORMAT, T  # noqa: E402  (the names of the trace)

failures = []
cases = 0


def ev(e, ts, name=None, tid=1, **extra):
    d = {T.PH: e.ph, T.NAME: e.name if name is None else name, T.CAT: e.cat, T.PID: 7,
         T.TID: tid, T.TS: ts, T.ARGS: {}}
    if e.scope:
        d[T.S] = e.scope
    d.update(extra)
    return d


def write(dirname, name, events):
    path = os.path.join(dirname, name + ".json.gz")
    meta = ev(EV.META, 0.0)
    meta[T.ARGS] = {F.FORMAT: FORMAT, F.PID: 7}
    with gzip.open(path, "wt") as f:
        json.dump([meta] + events + [ev(EV.END, 1e6)], f)
    return path


def run(checker, trace, out_text, dirname, expect_rc, what):
    global cases
    cases += 1
    out = os.path.join(dirname, "out.txt")
    with open(out, "w") as f:
        f.write(out_text)
    p = subprocess.run([sys.executable, os.path.join(HERE, checker), trace, out],
                       capture_output=True, text=True)
    said = (p.stdout + p.stderr).strip().splitlines()
    if p.returncode != expect_rc or not said:
        failures.append("%s: exit %d (expected %d), said %r" % (what, p.returncode, expect_rc, said[-3:]))
    elif expect_rc and not any("FAIL" in line for line in said):
        failures.append("%s: failed without a FAIL line: %r" % (what, said[-3:]))


def features_story():
    """Two steps, a module's forward and backward, the checkpointed block's
    forward seen again inside the backward."""
    e = []
    for step in (1, 2):
        t = step * 1000.0
        e.append(ev(EV.NVTX_MARK, t, "step:%d" % step))
        e.append(ev(EV.NVTX_PUSH, t + 1, "fwd:blocks.0.ff.0"))
        e.append(ev(EV.NVTX_POP, t + 2, ""))
        e.append(ev(EV.NVTX_START, t + 3, "bwd:blocks.0.ff.0", **{T.ID: step}))
        e.append(ev(EV.NVTX_PUSH, t + 4, "fwd:blocks.0.ff.0"))
        e.append(ev(EV.NVTX_POP, t + 5, ""))
        e.append(ev(EV.NVTX_END, t + 6, "bwd:blocks.0.ff.0", **{T.ID: step}))
    return e


def nvtx_story():
    """What nvtx_torch.py leaves: three steps each with an inner range, aten
    ranges, a start/end range and a mark."""
    e, t = [], 0.0
    for i in range(3):
        for name in ("step%d" % i, "inner", "aten::mm"):
            t += 1
            e.append(ev(EV.NVTX_PUSH, t, name))
        for _ in range(3):
            t += 1
            e.append(ev(EV.NVTX_POP, t, ""))
    e.append(ev(EV.NVTX_PUSH, t + 1, "aten::add"))
    e.append(ev(EV.NVTX_POP, t + 2, ""))
    e.append(ev(EV.NVTX_START, t + 3, "startend", **{T.ID: 9}))
    e.append(ev(EV.NVTX_END, t + 4, "startend", **{T.ID: 9}))
    e.append(ev(EV.NVTX_MARK, t + 5, "mark"))
    return e


def main():
    with tempfile.TemporaryDirectory() as d:
        feat_ok = "GPUPROF_FEATURES ok=1 steps=2 compile=0 workers=0 start=fork\n"
        run("check_features.py", write(d, "feat", features_story()), feat_ok, d, 0,
            "features: the story")
        run("check_features.py", write(d, "feat_empty", []), feat_ok, d, 1,
            "features: no ranges in the trace")
        # modules named, but no step: nothing of the steps to check
        no_steps = [e for e in features_story() if not e[T.NAME].startswith("step:")]
        run("check_features.py", write(d, "feat_nosteps", no_steps),
            "GPUPROF_FEATURES ok=1 steps=0 compile=0 workers=0 start=fork\n", d, 1,
            "features: a run that took no step")
        nvtx_ok = "GPUPROF_TORCH_NVTX pushes=6\n"
        run("check_torch_nvtx.py", write(d, "nvtx", nvtx_story()), nvtx_ok, d, 0,
            "torch nvtx: the story")
        run("check_torch_nvtx.py", write(d, "nvtx_empty", []), nvtx_ok, d, 1,
            "torch nvtx: no ranges in the trace")
    for f in failures:
        print("FAIL " + f)
    print("%d passed, %d failed" % (cases - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
