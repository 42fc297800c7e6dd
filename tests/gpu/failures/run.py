#!/usr/bin/env python3
"""When the job fails, on the GPU: signals, SIGKILL, other libraries' memory,
a loop that releases its cache, out of memory in both modes. Each case is
run traced and, where the comparison needs it, unprofiled; each prints a
row `RESULT failures.<case> PASS|FAIL <what was measured>` to stdout and
to OUT/failures.txt as it ends.

usage: run.py GPUPROF OUT [--only CASE,...]
cases: signals, storm, sigkill, exit, early_kill, cupy, jax, trainer, oom, oom_gate"""
import concurrent.futures
import gzip
import threading
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from result_rows import Rows  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
GP, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ONLY = sys.argv[4].split(",") if len(sys.argv) > 4 and sys.argv[3] == "--only" else None
PY = sys.executable
os.makedirs(OUT, exist_ok=True)
row = Rows("failures", log=os.path.join(OUT, "failures.txt"))


def default_sigint():
    # a background job's ignored SIGINT would survive exec (Python would
    # then install no KeyboardInterrupt handler); no core files of GPU
    # processes (gigabytes each) on the test machine's disk
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def status(rc):
    """subprocess's returncode as a shell (and gpuprof) says it."""
    return 128 - rc if rc < 0 else rc


def analyze(trace):
    p = subprocess.run([GP, "analyze", "--json", trace], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("analyze %s: exit %d: %s" % (trace, p.returncode, p.stderr.strip()))
    return json.loads(p.stdout)


def analyze_text(trace):
    return subprocess.run([GP, "analyze", trace], capture_output=True, text=True).stdout


def run_loop(argv, traced, trace, send=None, after_step=4, timeout=240):
    """Runs loop.py (traced or not); with send, sends that signal to the
    program (not the launcher: as a scheduler signals every process) once it
    printed step after_step. Returns (status, the program's lines, the
    steps it printed before the signal was sent: all of them without one)."""
    cmd = [PY, os.path.join(HERE, "loop.py")] + argv
    if traced:
        cmd = [GP, "--trace", "--force", "-o", trace, "--"] + cmd
    err = open(trace + (".traced" if traced else ".plain") + ".err", "w")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, preexec_fn=default_sigint)
    lines, pid, sent, before = [], None, False, None
    deadline = time.time() + timeout
    for line in p.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("pid "):
            pid = int(line.split()[1])
        if send and not sent and line.startswith("step %d " % after_step):
            os.kill(pid, send)
            sent = True
            before = sum(1 for l in lines if l.startswith("step "))
        if time.time() > deadline:
            p.kill()
    st = status(p.wait())
    if before is None:
        before = sum(1 for l in lines if l.startswith("step "))
    return st, lines, before


def printed(lines, key):
    vals = [int(w.split("=")[1]) for l in lines if l.startswith("step ") for w in l.split() if w.startswith(key + "=")]
    return vals[-1] if vals else None


def signals():
    sig = signal
    cases = [("SIGTERM", "sent", []), ("SIGINT", "sent", []), ("SIGHUP", "sent", []),
             ("SIGQUIT", "sent", []), ("SIGABRT", "raised", []), ("SIGSEGV", "raised", []),
             ("SIGBUS", "raised", []), ("SIGFPE", "raised", []),
             ("SIGTERM", "handled", ["--handle", "SIGTERM"]),
             ("SIGHUP", "ignored", ["--ignore", "SIGHUP", "--seconds", "8"])]
    # the cases run side by side (each process holds ~2.5 GB): what each
    # measures is its own process's
    with concurrent.futures.ThreadPoolExecutor(len(cases)) as pool:
        list(pool.map(lambda c: one_signal(*c), cases))


def one_signal(name, how, extra):
        sig = signal
        case = "signal.%s.%s" % (name, how)
        num = getattr(sig, name)
        argv = extra + (["--raise", name, "--at", "4"] if how == "raised" else [])
        send = num if how != "raised" else None
        trace = os.path.join(OUT, "sig_%s_%s.json.gz" % (name, how))
        try:
            want, plain, _ = run_loop(argv, False, trace, send)
            # a signal from outside: the program runs on while its trace
            # is finished (README), so the steps it printed after the
            # signal was sent may be missing from the trace
            got, lines, steps = run_loop(argv, True, trace, send)
            printed_all = sum(1 for l in lines if l.startswith("step "))
            doc = analyze(trace)
            t, d = doc["traces"][0], doc["devices"][0]
            peak = d["summary"]["allocated"]["peak"]
            reserved = d["summary"]["reserved"]["peak"]
            trace_steps = d["steps"]["count"]
            # Python handles SIGINT (KeyboardInterrupt): the program dies of
            # it, or not, as it does unprofiled
            dies = want == 128 + num
            ok = (got == want and t["complete"] and
                  t["end_signal"] == (num if dies else None) and
                  peak == printed(lines, "max_allocated") and reserved == printed(lines, "max_reserved") and
                  trace_steps >= steps)
            row(case, ok, "status %d (unprofiled %d); trace complete=%s end_signal=%s; steps printed %d "
                "(%d before the signal was sent), "
                "in the trace %d; allocated peak %d (PyTorch %s), reserved peak %d (PyTorch %s)" % (
                    got, want, t["complete"], t["end_signal"], printed_all, steps, trace_steps, peak,
                    printed(lines, "max_allocated"), reserved, printed(lines, "max_reserved")))
        except Exception as e:  # one case's failure must not hide the others
            row(case, False, "error: %s" % e)


def storm():
    """Twenty traced loops at once, each sent SIGTERM or SIGQUIT from here
    at a random moment 0-2 s after its first step, where the signal often
    stops a thread inside CUDA: every trace complete, with the signal, and
    each process ended by it at most GPUPROF_SIGNAL_WAIT_MS (5 s) later,
    as the handler's wait would have run out, so well under it."""
    rng = random.Random(int(os.environ.get("GPUPROF_SEED", "1")))
    runs = 20

    def one(k):
        sig = (signal.SIGTERM, signal.SIGQUIT)[k % 2]
        trace = os.path.join(OUT, "storm_%d.json.gz" % k)
        cmd = [GP, "--trace", "--force", "-o", trace, "--", PY, os.path.join(HERE, "loop.py"), "--seconds", "30"]
        err = open(trace + ".err", "w")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, preexec_fn=default_sigint)
        pid = None
        for line in p.stdout:
            if line.startswith("pid "):
                pid = int(line.split()[1])
            if line.startswith("step 1 "):
                break
        # the rest of its output read, so that a full pipe never stops it
        threading.Thread(target=p.stdout.read, daemon=True).start()
        time.sleep(delays[k])
        sent = time.monotonic()
        os.kill(pid, sig)
        rc = status(p.wait())
        took = time.monotonic() - sent
        t = analyze(trace)["traces"][0]
        return sig, rc, took, t["complete"], t["end_signal"]

    delays = [rng.uniform(0, 2) for _ in range(runs)]
    with concurrent.futures.ThreadPoolExecutor(runs) as pool:
        res = list(pool.map(one, range(runs)))
    bad = [r for r in res if not (r[1] == 128 + r[0] and r[3] and r[4] == r[0])]
    took = sorted(r[2] for r in res)
    row("signal.storm", not bad and took[-1] < 2.5,
        "%d runs at once, SIGTERM/SIGQUIT 0-2 s after the first step: %d with the right status, a complete "
        "trace and its signal; signal to exit median %.3f s, worst %.3f s (the handler's wait: 5 s)%s" % (
            runs, runs - len(bad), took[len(took) // 2], took[-1],
            "; wrong: %s" % ", ".join("%s rc %d complete %s end %s" % (r[0].name, r[1], r[3], r[4])
                                       for r in bad) if bad else ""))


def trace_events(trace):
    """The events of a (recovered) trace, one dict each."""
    evs = []
    with gzip.open(trace, "rt") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            try:
                evs.append(json.loads(line))
            except ValueError:
                continue
    return evs


def last_event_unix_ns(trace, evs=None):
    """Unix time of the newest event the (recovered) trace holds: its ts (and
    dur) in µs from gpuprof.meta's ts_base_ns, which is CLOCK_REALTIME on
    Linux (exporters/TRACE_FORMAT.md), the clock of time.time_ns() here (the
    same host). Older traces without it: from start_unix_ns."""
    base, last = None, None
    for ev in trace_events(trace) if evs is None else evs:
        if ev.get("name") == "gpuprof.meta":
            base = ev["args"].get("ts_base_ns", ev["args"]["start_unix_ns"])
        elif ev.get("name") != "gpuprof.end" and "ts" in ev and ev.get("ph") not in ("M",):
            ts = float(ev["ts"]) + float(ev.get("dur", 0))
            last = ts if last is None else max(last, ts)
    return base + int(last * 1000)


def sigkill():
    """A 30-second training loop killed at ten random moments: what the
    trace lost is the time between the kill and its newest event."""
    rng = random.Random(int(os.environ.get("GPUPROF_SEED", "1")))
    moments = [rng.uniform(3, 30) for _ in range(10)]
    losses = []
    for batch in (moments,):
        procs = []
        for k, at in enumerate(batch):
            trace = os.path.join(OUT, "kill_%d.json.gz" % (len(losses) + k))
            cmd = [GP, "--trace", "--force", "-o", trace, "--", PY, os.path.join(HERE, "loop.py"),
                   "--seconds", "40"]
            # its output to a file: a pipe nobody reads would stop the loop
            log = open(trace + ".out", "w+")
            p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.DEVNULL, text=True,
                                 preexec_fn=default_sigint)
            pid = None
            procs.append([p, pid, trace, at, None])
        while any(x[4] is None for x in procs):
            for x in procs:
                if x[1] is None:
                    with open(x[2] + ".out") as f:
                        first = f.readline()
                    if first.startswith("pid ") and first.endswith("\n"):
                        x[1] = int(first.split()[1])
                        x[3] = time.time() + x[3]  # the moment, from the loop's start
                    continue
                if x[4] is None and time.time() >= x[3]:
                    x[4] = time.time_ns()
                    try:
                        os.kill(x[1], signal.SIGKILL)
                    except ProcessLookupError:
                        x[4] = -1  # ended before its moment: not counted
            time.sleep(0.01)
        for p, pid, trace, _, killed in procs:
            p.wait()
            if killed > 0:
                losses.append((killed - last_event_unix_ns(trace)) / 1e9)
    worst = max(losses) if losses else float("inf")
    row("sigkill", worst <= 0.5 and len(losses) == 10, "10 kills at %s s: lost %s s; worst %.3f s (at most 0.5 s)" % (
        ",".join("%.1f" % m for m in moments), ",".join("%.3f" % l for l in losses), worst))


def exit_case():
    """Six steps ended by os._exit(0), and six whose C library calls
    _exit(0) on a thread of its own (exit_job.py): the trace is finished
    (complete: not cut short, not repaired), holds the six steps, and its
    allocated peak is PyTorch's max_memory_allocated() as the job printed
    it before exiting."""
    helper = os.path.join(OUT, "exit_helper.so")
    build = subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-o", helper,
                            os.path.join(HERE, "exit_helper.c"), "-lpthread"], capture_output=True, text=True)
    for how in ("os_exit", "thread"):
        case = "exit.%s" % how
        trace = os.path.join(OUT, "exit_%s.json.gz" % how)
        if how == "thread" and build.returncode != 0:
            row(case, False, "exit_helper.c did not build: %s" % build.stderr.strip()[-300:])
            continue
        try:
            p = subprocess.run([GP, "--trace", "--force", "-o", trace, "--", PY, os.path.join(HERE, "exit_job.py"),
                                how, helper], capture_output=True, text=True, timeout=300,
                               preexec_fn=default_sigint)
            with open(trace + ".log", "w") as f:
                f.write("exit %d\n%s\n%s\n" % (p.returncode, p.stdout, p.stderr))
            lines = p.stdout.splitlines()
            ends = [l for l in lines if l.startswith("EXIT ")]
            want = dict(kv.split("=") for kv in ends[0].split()[1:]) if ends else {}
            printed = sum(1 for l in lines if l.startswith("step "))
            doc = analyze(trace)
            t, d = doc["traces"][0], doc["devices"][0]
            peak = d["summary"]["allocated"]["peak"]
            steps = (d["steps"] or {}).get("count", 0)
            ok = (p.returncode == 0 and printed == 6 and t["complete"] and steps == 6 and
                  str(peak) == want.get("max_allocated"))
            row(case, ok, "exit %d; trace complete=%s; steps printed %d, in the trace %d; allocated peak %d "
                "(PyTorch %s)" % (p.returncode, t["complete"], printed, steps, peak, want.get("max_allocated")))
        except Exception as e:  # one case's failure must not hide the other
            row(case, False, "error: %r" % e)


class DiskTail:
    """What a trace's file holds so far, read as it grows: the newest
    event's Unix time (ns), as last_event_unix_ns reckons it."""

    def __init__(self, path):
        self.path, self.pos, self.text = path, 0, ""
        self.z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.base, self.last = None, None

    def newest_unix_ns(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return None
        self.pos += len(data)
        self.text += self.z.decompress(data).decode("utf-8", "replace")
        lines = self.text.split("\n")
        self.text = lines.pop()
        for line in lines:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("name") == "gpuprof.meta":
                self.base = ev["args"].get("ts_base_ns", ev["args"]["start_unix_ns"])
            elif ev.get("name") != "gpuprof.end" and "ts" in ev and ev.get("ph") not in ("M",):
                ts = float(ev["ts"]) + float(ev.get("dur", 0))
                self.last = ts if self.last is None else max(self.last, ts)
        if self.base is None or self.last is None:
            return None
        return self.base + int(self.last * 1000)


def early_kill():
    """loop.py killed with SIGKILL 0.6, 0.75 and 0.9 s after its first step
    (in the first second of its steps) and 3 s after it: the trace's newest
    event (last_event_unix_ns) is within 0.5 s of the kill (time.time_ns()
    just before os.kill, the same clock), and every step the job printed
    more than 0.5 s before the kill (its t=, time.time()) has its step:N
    mark in the trace. Until the kill the trace's file is read as it grows,
    every 20 ms (DiskTail): what it holds is never more than 0.4 s behind
    the job, the recorder's flush period (0.25 s) and a margin for its
    tick's work; a kill's loss depends on where in the flush period it
    falls, this measure on none (with the former 0.5 s period: 0.48-0.54 s
    over a run of a few seconds). Each run by itself, so that the kill's
    moment is this one's."""
    for delay in (0.6, 0.75, 0.9, 3.0):
        case = "early_kill.%.2fs" % delay
        trace = os.path.join(OUT, "early_kill_%d.json.gz" % int(delay * 1000))
        cmd = [GP, "--trace", "--force", "-o", trace, "--", PY, os.path.join(HERE, "loop.py"), "--seconds", "30"]
        try:
            with open(trace + ".out", "w+") as log:
                p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.DEVNULL, text=True,
                                     preexec_fn=default_sigint)
                pid, first, killed = None, None, None
                tail, behind, read_at = DiskTail(trace), 0.0, 0.0
                deadline = time.time() + 240
                while killed is None and time.time() < deadline and p.poll() is None:
                    with open(trace + ".out") as f:
                        lines = f.read().splitlines(True)
                    for l in lines:
                        if l.startswith("pid ") and l.endswith("\n"):
                            pid = int(l.split()[1])
                        if first is None and l.startswith("step 1 ") and l.endswith("\n"):
                            first = float(l.split("t=")[1])
                    if pid and first is not None and time.time() >= first + delay:
                        killed = time.time_ns()
                        os.kill(pid, signal.SIGKILL)
                    elif first is not None and time.time() >= read_at:
                        read_at = time.time() + 0.02
                        newest = tail.newest_unix_ns()
                        behind = max(behind, time.time() - (newest / 1e9 if newest else first))
                    time.sleep(0.002)
                if killed is None:
                    p.kill()
                p.wait()
            if killed is None:
                row(case, False, "the job never stepped (pid %s)" % pid)
                continue
            with open(trace + ".out") as f:
                printed = [(int(l.split()[1]), float(l.split("t=")[1])) for l in f
                           if l.startswith("step ") and l.endswith("\n")]
            evs = trace_events(trace)
            lost = (killed - last_event_unix_ns(trace, evs)) / 1e9
            marks = {e["name"] for e in evs if e.get("cat") == "nvtx" and e.get("name", "").startswith("step:")}
            due = [n for n, t in printed if t * 1e9 < killed - 0.5e9]
            missing = [n for n in due if "step:%d" % n not in marks]
            ok = lost <= 0.5 and not missing and len(due) > 0 and behind <= 0.4
            row(case, ok, "killed %.3f s after step 1: lost %.3f s (at most 0.5 s); the file at most %.3f s "
                "behind the job before (at most 0.4 s); steps printed %d, %d of them more than 0.5 s before the "
                "kill, missing from the trace: %s; step marks in the trace %d" % (
                    (killed / 1e9) - first, lost, behind, len(printed), len(due), missing or "none", len(marks)))
        except Exception as e:
            row(case, False, "error: %r" % e)


def other_library(case, script, marker, library):
    trace = os.path.join(OUT, case + ".json.gz")
    p = subprocess.run([GP, "--trace", "--force", "-o", trace, PY, os.path.join(HERE, script)],
                       capture_output=True, text=True)
    if p.returncode != 0 or marker not in p.stdout:
        row(case, False, "program exit %d: %s" % (p.returncode, (p.stderr or p.stdout).strip()[-300:]))
        return None, None
    vals = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in p.stdout.split(marker)[1].split()
            if "=" in kv}
    doc = analyze(trace)
    d = doc["devices"][0] if doc["devices"] else None
    text = analyze_text(trace)
    by_api = {g["api"]: g["bytes"] for g in (d["peak"]["by_api"] or [])} if d and d["peak"] else {}
    named = sum(b for k, b in by_api.items() if "(%s)" % library in k)
    notes = " ".join(doc["traces"][0]["notes"])
    clean = (d is not None and d["mode"] == "cuda" and d["peak"]["by_category"] is None and
             "no device memory was allocated" not in text and "PyTorch did not" not in notes and
             "parameters" not in text)
    return (vals, d, by_api, named, clean), trace


def cupy():
    r, _ = other_library("cupy", "cupy_pool.py", "CUPY", "CuPy")
    if not r:
        return
    vals, d, by_api, named, clean = r
    ok = clean and named >= vals["pool_total"] and d["peak"]["bytes"] >= vals["pool_total"]
    row("cupy", ok, "pool total %d (CuPy); peak %d; named CuPy %d; by API %s; cuda mode, no PyTorch "
        "category or note: %s" % (vals["pool_total"], d["peak"]["bytes"], named, by_api, clean))


def jax():
    r, _ = other_library("jax", "jax_prealloc.py", "JAX", "JAX/XLA")
    if not r:
        return
    vals, d, by_api, named, clean = r
    held = max(vals.get("bytes_reserved", -1), vals.get("pool_bytes", -1), vals.get("bytes_limit", -1))
    ok = clean and named >= 0.95 * held and d["peak"]["bytes"] >= 0.95 * held
    row("jax", ok, "XLA's limit %d, reserved %d, pool %d; peak %d; named JAX/XLA %d; by API %s; "
        "cuda mode, no PyTorch category or note: %s" % (
            vals.get("bytes_limit", -1), vals.get("bytes_reserved", -1), vals.get("pool_bytes", -1),
            d["peak"]["bytes"], named, by_api, clean))


def trainer():
    trace = os.path.join(OUT, "trainer.json.gz")
    p = subprocess.run([GP, "--trace", "--force", "-o", trace, PY, os.path.join(HERE, "trainer_release.py")],
                       capture_output=True, text=True)
    try:
        vals = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in p.stdout.split("TRAINER")[1].split()}
        d = analyze(trace)["devices"][0]
        alloc, res = d["summary"]["allocated"]["peak"], d["summary"]["reserved"]["peak"]
        other = d["summary"]["other"]
        ok = alloc == vals["max_allocated"] and res == vals["max_reserved"]
        row("trainer", ok, "allocated peak %d (PyTorch %d), reserved peak %d (PyTorch %d); other memory "
            "peak %s" % (alloc, vals["max_allocated"], res, vals["max_reserved"], other and other["peak"]))
    except Exception as e:
        row("trainer", False, "error: %s (exit %d, %s)" % (e, p.returncode, p.stderr.strip()[-300:]))


def oom():
    script = os.path.join(ROOT, "samples", "pytorch", "batch_doubling.py")
    plain = subprocess.run([PY, script], capture_output=True, text=True)
    want = [l for l in plain.stdout.splitlines() if l.startswith("GPUPROF_TORCH_EXPECT")]
    for mode in ("native", "tensor"):
        trace = os.path.join(OUT, "oom_%s.json.gz" % mode)
        p = subprocess.run([GP, "--trace", "--force", "--mode", mode, "-o", trace, PY, script],
                           capture_output=True, text=True)
        with open(trace + ".log", "w") as f:
            f.write("traced exit %d\n%s\n%s\nunprofiled exit %d\n%s\n%s\n" % (
                p.returncode, p.stdout, p.stderr, plain.returncode, plain.stdout, plain.stderr))
        try:
            exp = dict(kv.split("=", 1) for kv in [l for l in p.stdout.splitlines()
                                                   if l.startswith("GPUPROF_TORCH_EXPECT")][0].split()[1:])
            d = analyze(trace)["devices"][0]
            lead = d["ooms"][0]
            text = analyze_text(trace)
            first = [l.strip() for l in text.splitlines() if l.strip()]
            at = next(i for i, l in enumerate(first) if "out of memory" in l.lower() or "OutOfMemoryError" in l)
            lead_text = " / ".join(first[at:at + 4])
            ok = (p.returncode == plain.returncode and lead["phase"] == "forward" and
                  not lead["recovered"] and lead["request"] == int(exp["activation_bytes"]) and
                  exp.get("failed_batch") == dict(kv.split("=", 1) for kv in want[0].split()[1:]).get("failed_batch"))
            row("oom.%s" % mode, ok, "exit %d (unprofiled %d); failed batch %s (unprofiled %s); lead: request %d "
                "(one activation %s), phase %s, recovered %s, %d incidents; report: %s" % (
                    p.returncode, plain.returncode, exp.get("failed_batch"),
                    dict(kv.split("=", 1) for kv in want[0].split()[1:]).get("failed_batch"),
                    lead["request"], exp["activation_bytes"], lead["phase"], lead["recovered"],
                    d["oom_count"], lead_text[:300]))
        except Exception as e:
            row("oom.%s" % mode, False, "error: %r (exit %d, unprofiled %d): %s | %s" % (
                e, p.returncode, plain.returncode, p.stderr.strip()[-400:], plain.stderr.strip()[-300:]))


def oom_gate():
    """A convolutional batch search (tests/gpu/stories/conv_doubling.py) and
    an MLP's (samples/pytorch/batch_doubling.py), each ending in the
    OutOfMemoryError PyTorch raises to the program, traced in native mode:
    exactly one failure is fatal, the one PyTorch's message names, at the
    step the program says; the outcomes add up; those PyTorch raised are as
    many as its own num_ooms (where the script prints it); check fails the
    run with its line, and --allow-oom passes it."""
    for name, script in (("conv", os.path.join(ROOT, "tests", "gpu", "stories", "conv_doubling.py")),
                         ("mlp", os.path.join(ROOT, "samples", "pytorch", "batch_doubling.py"))):
        trace = os.path.join(OUT, "oom_gate_%s.json.gz" % name)
        p = subprocess.run([GP, "--trace", "--force", "--mode", "native", "-o", trace, PY, script],
                           capture_output=True, text=True, timeout=600)
        with open(trace + ".log", "w") as f:
            f.write("traced exit %d\n%s\n%s\n" % (p.returncode, p.stdout, p.stderr))
        try:
            exp = dict(kv.split("=", 1) for kv in [l for l in p.stdout.splitlines()
                                                   if l.startswith("GPUPROF_TORCH_EXPECT")][0].split()[1:])
            d = analyze(trace)["devices"][0]
            n = d["oom_outcomes"]
            fatal = [o for o in d["ooms"] if o["fatal"]]
            lead = fatal[0] if fatal else {}
            want_request = int(exp.get("fatal_request", exp.get("activation_bytes", -1)))
            ok = (n["fatal"] == 1 and sum(n.values()) == d["oom_count"] and len(fatal) == 1 and
                  lead.get("raised") and lead.get("request") == want_request)
            if "fatal_step" in exp:
                ok = ok and lead.get("step") == int(exp["fatal_step"])
            raised = n["fatal"] + n["caught"] + n["later_steps"]
            if "num_ooms" in exp:
                ok = ok and raised == int(exp["num_ooms"])
            c = subprocess.run([GP, "check", trace, "--max-peak", "100%"], capture_output=True, text=True)
            a = subprocess.run([GP, "check", trace, "--max-peak", "100%", "--allow-oom"], capture_output=True,
                               text=True)
            line = next((l for l in c.stdout.splitlines() if "ran out of memory" in l), "")
            ok = ok and c.returncode == 1 and line.startswith("FAIL: process ") and a.returncode == 0
            row("oom_gate.%s" % name, ok, "outcomes %s of %d; fatal request %s (PyTorch %s) at step %s (%s); "
                "raised %d (num_ooms %s); check exit %d, --allow-oom %d: %s" % (
                    n, d["oom_count"], lead.get("request"), want_request, lead.get("step"),
                    exp.get("fatal_step", "-"), raised, exp.get("num_ooms", "-"), c.returncode, a.returncode,
                    line[:200]))
        except Exception as e:
            row("oom_gate.%s" % name, False, "error: %r (traced exit %d): %s" % (e, p.returncode,
                                                                                p.stderr.strip()[-300:]))


def guarded(name, fn):
    try:
        fn()
    except Exception as e:  # a crash of one part must not hide the others
        row(name, False, "error: %r" % e)


for name, fn in (("signals", signals), ("storm", storm), ("sigkill", sigkill), ("exit", exit_case),
                 ("early_kill", early_kill), ("cupy", cupy), ("jax", jax), ("trainer", trainer), ("oom", oom),
                 ("oom_gate", oom_gate)):
    if ONLY is None or name in ONLY:
        guarded(name, fn)
sys.exit(row.exit_status())
