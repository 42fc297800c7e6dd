#!/usr/bin/env python3
"""The whole recorder (libgpuprof_inject.so) without a GPU, over the stand-in
CUPTI (stub_cupti.c), in jobs of six steps (exit_job.c, job.py) that end
without exit(): the trace is finished all the same, holds every step and
PyTorch's peak as the job printed it, and the process ends with the status
it asked for; a job that cannot have its trace finished still ends, in
bounded time; a signal being finished still ends the process. And what a
job killed with SIGKILL leaves: the trace on disk is never far behind it,
from its first second on. And a job whose threads step at once, the
stand-in CUPTI making their kernels' records in buffers from the
recorder's pool: every record reaches the trace, or is counted as lost
when the pool is used up. And the flight recorder (--window): the trace's
file holds the meta, the outline of every step with its peak as the job
made it, and the last window; killed with SIGKILL, the outline so far.

usage: test_exits.py STUB_DIR RECORDER EXIT_JOB JOB_LIBRARY GPUPROF [PYTHON]
(PYTHON empty: the os._exit case is left out, as in a sanitizer build)"""
import glob
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

STUB_DIR = RECORDER = EXIT_JOB = JOB_LIB = GP = PYTHON = None
HERE = os.path.dirname(os.path.abspath(__file__))


def env_for(trace, extra=None):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = STUB_DIR + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["GPUPROF_OUTPUT"] = trace
    env["GPUPROF_MODE"] = "native"
    for k in ("GPUPROF_ROOT_PID", "GPUPROF_RUN_DIR", "GPUPROF_FLUSH_MS", "GPUPROF_EXIT_WAIT_MS",
              "GP_STUB_FLUSH_MS", "GP_STUB_BUFFER_RECORDS", "GPUPROF_BUFFER_MB", "NVTX_INJECTION64_PATH",
              "CUDA_INJECTION64_PATH"):
        env.pop(k, None)
    env.update(extra or {})
    return env


def steps_printed(out):
    """[(step, max_allocated, unix time)] as the job printed them."""
    res = []
    for line in out.splitlines():
        w = line.split()
        if len(w) == 4 and w[0] == "step":
            res.append((int(w[1]), int(w[2].split("=")[1]), float(w[3].split("=")[1])))
    return res


def kernels_printed(out):
    """(records made, records that found no buffer) as the threads job printed them."""
    for line in out.splitlines():
        w = line.split()
        if len(w) == 4 and w[0] == "kernels" and w[2] == "lost":
            return int(w[1]), int(w[3])
    return None


def analyze(trace):
    p = subprocess.run([GP, "analyze", "--json", trace], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError("analyze %s: exit %d: %s" % (trace, p.returncode, p.stderr.strip()))
    return json.loads(p.stdout)


def events_on_disk(path):
    """The events a trace's file holds now, cut short or not: what its gzip
    stream decodes to so far, whole lines only."""
    with open(path, "rb") as f:
        data = f.read()
    text = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data).decode("utf-8", "replace")
    evs = []
    for line in text.split("\n")[:-1]:
        line = line.strip().rstrip(",")
        if line.startswith("{"):
            try:
                evs.append(json.loads(line))
            except ValueError:
                pass
    return evs


def newest_unix(evs):
    """Unix time (s) of the newest event: ts (µs) from the meta's ts_base_ns,
    which is CLOCK_REALTIME (TRACE_FORMAT.md); None before any event."""
    base = next((e["args"]["ts_base_ns"] for e in evs if e.get("name") == "gpuprof.meta"), None)
    ts = [float(e["ts"]) for e in evs
          if e.get("ph") != "M" and e.get("name") not in ("gpuprof.meta", "gpuprof.end")]
    if base is None or not ts:
        return None
    return (base + max(ts) * 1000) / 1e9


class Exits(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gp_exits_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_job(self, argv, extra=None, timeout=30):
        """Runs a job; returns (status as the shell says it, stdout, stderr,
        its trace, seconds from its last printed line to its end)."""
        trace = os.path.join(self.tmp, "job.json.gz")
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env_for(trace, extra), cwd=self.tmp)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise
        ended = time.time()
        rc = p.returncode
        found = glob.glob(os.path.join(self.tmp, "job.*.json.gz"))
        self.assertEqual(len(found), 1, "one trace: %s; stderr: %s" % (found, err))
        printed = steps_printed(out)
        took = ended - printed[-1][2] if printed else None
        return (128 - rc if rc < 0 else rc), out, err, found[0], took

    def check_whole(self, trace, out, err):
        """The trace is finished, with every step the job printed and its
        peak."""
        printed = steps_printed(out)
        self.assertEqual([s[0] for s in printed], [1, 2, 3, 4, 5, 6], out)
        doc = analyze(trace)
        self.assertTrue(doc["devices"], "no device in the trace; stderr: %s" % err)
        t, d = doc["traces"][0], doc["devices"][0]
        self.assertTrue(t["complete"], "trace finished; stderr: %s" % err)
        self.assertIsNone(t["end_signal"])
        self.assertEqual(d["steps"]["count"], 6)
        self.assertEqual(d["summary"]["allocated"]["peak"], printed[-1][1])
        end = [e for e in events_on_disk(trace) if e.get("name") == "gpuprof.end"]
        self.assertEqual(len(end), 1)
        self.assertTrue(end[0]["args"]["clean"])

    def test_exit(self):
        # exit(): the atexit handler, as before
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "exit"])
        self.assertEqual(st, 0, err)
        self.check_whole(trace, out, err)

    def test__exit(self):
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "_exit"])
        self.assertEqual(st, 3, err)
        self.check_whole(trace, out, err)

    def test__Exit(self):
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "_Exit"])
        self.assertEqual(st, 4, err)
        self.check_whole(trace, out, err)

    def test_quick_exit(self):
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "quick_exit"])
        self.assertEqual(st, 8, err)
        self.check_whole(trace, out, err)

    def test_thread(self):
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "thread"])
        self.assertEqual(st, 5, err)
        self.check_whole(trace, out, err)

    def test_two_at_once(self):
        # the second waits for the first, which finishes the trace
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "two"])
        self.assertIn(st, (3, 5), err)
        self.check_whole(trace, out, err)

    def test_handler_during_exit(self):
        # a signal handler calling _exit on the thread whose _exit is
        # finishing the trace (each CUPTI flush takes 2 s here) ends the
        # process at once, with its status
        st, out, err, trace, took = self.run_job([EXIT_JOB, RECORDER, "handler"], {"GP_STUB_FLUSH_MS": "2000"})
        self.assertEqual(st, 9, err)
        self.assertLess(took, 1.5)

    def test_vfork(self):
        # the vfork()ed child shares the job's memory: its _exit must touch
        # nothing of the recorder's, and ends with its own status
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "vfork"])
        self.assertEqual(st, 3, err)
        self.assertIn("child 7\n", out)
        self.check_whole(trace, out, err)

    def test_python_os_exit(self):
        if not PYTHON:
            self.skipTest("a sanitizer build's recorder does not load into Python")
        st, out, err, trace, _ = self.run_job([PYTHON, os.path.join(HERE, "job.py"), JOB_LIB, RECORDER])
        self.assertEqual(st, 3, err)
        self.check_whole(trace, out, err)

    def test_held(self):
        # the writer cannot finish (CUPTI's lock is held by the exiting
        # thread): the exit comes after GPUPROF_EXIT_WAIT_MS, said on stderr
        st, out, err, trace, took = self.run_job([EXIT_JOB, RECORDER, "held"],
                                                 {"GPUPROF_EXIT_WAIT_MS": "300"})
        self.assertEqual(st, 6, err)
        self.assertIn("gpuprof: the trace writer did not finish in 300 ms", err)
        self.assertLess(took, 0.3 + 1.5)

    def test_sigterm_then__exit(self):
        # a SIGTERM from outside is being finished (slowly: every CUPTI
        # flush takes 300 ms) when the job calls _exit(3): the signal ends
        # it, as it would have without gpuprof, and the trace says so
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "sigterm"], {"GP_STUB_FLUSH_MS": "300"})
        self.assertEqual(st, 128 + signal.SIGTERM, err)
        doc = analyze(trace)
        self.assertTrue(doc["traces"][0]["complete"])
        self.assertEqual(doc["traces"][0]["end_signal"], signal.SIGTERM)
        self.assertEqual(doc["devices"][0]["steps"]["count"], 6)

    def test_handled_then_exit(self):
        # a SIGTERM the job handles: the recorder's signal thread asks the
        # writer for a flush while the job returns from main and its exit
        # stops the writer; the trace is finished, clean
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "handled"])
        self.assertEqual(st, 0, err)
        self.check_whole(trace, out, err)

    def test_busy_exit(self):
        # four threads recording without end (ranges, allocations, kernels'
        # records) when the job returns from main: exit() finishes the
        # trace while they go on, and the process ends with its status
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "busy"], {"GP_STUB_BUFFER_RECORDS": "64"})
        self.assertEqual(st, 0, err)
        self.assertEqual([s[0] for s in steps_printed(out)], [1, 2, 3, 4, 5, 6], out)
        doc = analyze(trace)
        self.assertTrue(doc["traces"][0]["complete"], err)
        self.assertEqual(doc["devices"][0]["steps"]["count"], 6)
        kernels, ranges, end = self.threads_trace(trace)
        self.assertTrue(end["clean"])
        self.assertGreater(kernels, 0)
        self.assertGreater(ranges, 0)

    def test_busy_sigterm(self):
        # busy's threads recording when a SIGTERM from outside ends the job:
        # the recorder's signal thread has the trace finished while they go
        # on, then the signal ends the process
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "busy_sigterm"],
                                              {"GP_STUB_BUFFER_RECORDS": "64"})
        self.assertEqual(st, 128 + signal.SIGTERM, err)
        doc = analyze(trace)
        self.assertTrue(doc["traces"][0]["complete"], err)
        self.assertEqual(doc["traces"][0]["end_signal"], signal.SIGTERM)
        self.assertEqual(doc["devices"][0]["steps"]["count"], 6)
        kernels, ranges, _ = self.threads_trace(trace)
        self.assertGreater(kernels, 0)
        self.assertGreater(ranges, 0)

    def threads_trace(self, trace):
        """The threads job's kernels, its ranges and the trace's end."""
        evs = events_on_disk(trace)
        kernels = sum(1 for e in evs if e.get("cat") == "kernel" and e.get("name") == "gp_stub_kernel")
        ranges = sum(1 for e in evs if e.get("ph") == "B" and e.get("name") == "thread_step")
        end = [e["args"] for e in evs if e.get("name") == "gpuprof.end"]
        self.assertEqual(len(end), 1)
        return kernels, ranges, end[0]

    def test_threads(self):
        # four threads at once, six times: each range, allocation and
        # kernel; the records' buffers (64 records each) handed back by the
        # stand-in CUPTI's thread and the writer's flushes: none lost
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "threads"], {"GP_STUB_BUFFER_RECORDS": "64"})
        self.assertEqual(st, 0, err)
        self.check_whole(trace, out, err)
        self.assertEqual(kernels_printed(out), (6 * 4 * 5 * 8, 0), out)
        kernels, ranges, end = self.threads_trace(trace)
        self.assertEqual(kernels, 6 * 4 * 5 * 8)
        self.assertEqual(ranges, 6 * 4 * 5)
        self.assertEqual((end["records"], end["dropped_cupti"], end["dropped_host"]), (kernels, 0, 0))

    def test_threads_pool_full(self):
        # the same with a pool of 4 buffers of one record each: the
        # records that found no buffer are counted, the others all in the trace
        st, out, err, trace, _ = self.run_job([EXIT_JOB, RECORDER, "threads"],
                                              {"GP_STUB_BUFFER_RECORDS": "1", "GPUPROF_BUFFER_MB": "8"})
        self.assertEqual(st, 0, err)
        self.check_whole(trace, out, err)
        made, lost = kernels_printed(out)
        self.assertEqual(made + lost, 6 * 4 * 5 * 8)
        self.assertGreater(lost, 0, "the pool of 4 buffers was never used up")
        kernels, _, end = self.threads_trace(trace)
        self.assertEqual((kernels, end["records"], end["dropped_cupti"]), (made, made, lost))

    def test_sigkill_early(self):
        """A job stepping every 10 ms, its trace read from disk every 10 ms
        for its first 1.2 s of steps, then killed with SIGKILL: the file is
        never more than 0.42 s behind the job (a 250 ms flush, the job's
        10 ms between steps, the read's own delay; a 500 ms flush leaves it
        0.5-0.55 s behind before each), and the killed job's trace holds
        every step it printed more than 0.5 s before the kill."""
        trace = os.path.join(self.tmp, "job.json.gz")
        outp = os.path.join(self.tmp, "out")
        with open(outp, "w") as out_f:
            p = subprocess.Popen([EXIT_JOB, RECORDER, "run"], stdout=out_f, stderr=subprocess.DEVNULL,
                                 env=env_for(trace), cwd=self.tmp)
        try:
            first = None
            deadline = time.time() + 20
            while first is None and time.time() < deadline:
                with open(outp) as f:
                    s = steps_printed(f.read())
                first = s[0][2] if s else None
                time.sleep(0.002)
            self.assertIsNotNone(first, "the job never stepped")
            path = glob.glob(os.path.join(self.tmp, "job.*.json.gz"))[0]
            worst, worst_at = 0.0, None
            while time.time() < first + 1.2:
                now = time.time()
                newest = newest_unix(events_on_disk(path))
                behind = now - (newest if newest is not None else first)
                if behind > worst:
                    worst, worst_at = behind, now - first
                time.sleep(0.01)
            killed = time.time()
            p.send_signal(signal.SIGKILL)
            p.wait()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        print("the file at most %.3f s behind the job (%.3f s into its steps)" % (worst, worst_at),
              file=sys.stderr)
        self.assertLess(worst, 0.42, "the file was %.3f s behind the job %.3f s into its steps" % (
            worst, worst_at))
        evs = events_on_disk(path)
        self.assertGreater(newest_unix(evs), killed - 0.5)
        marks = {e["name"] for e in evs if e.get("ph") == "i" and e.get("cat") == "nvtx"}
        with open(outp) as f:
            printed = steps_printed(f.read())
        due = [n for n, _, t in printed if t < killed - 0.5]
        self.assertTrue(due)
        self.assertEqual([n for n in due if "step:%d" % n not in marks], [])


def analyze_doc_outline(doc):
    """The last outline event's running maxima, from a trace's events."""
    ol = [e["args"] for e in doc if e.get("name") == "gpuprof.outline"]
    return {"reserved_peak": max(a["reserved_peak"] for a in ol)}


def step_peak(n):
    """Step n's peak as job_steps.c makes it: the parameters, its
    activations and its gradient."""
    act = (5, 9, 17, 3, 4, 6)[(n - 1) % 6]
    return 8 * MIB + 512 + act * MIB + 4096 * n + 2 * MIB


MIB = 1 << 20


class FlightRecorder(unittest.TestCase):
    """--window (GPUPROF_WINDOW_S): the trace's file holds the meta, the
    run's outline and, at the end, the last window; a job killed with
    SIGKILL leaves the outline so far."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gp_flight_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def check_outline(self, evs, steps):
        self.assertEqual(evs[0]["name"], "gpuprof.meta")
        self.assertEqual(sum(e.get("name") == "gpuprof.meta" for e in evs), 1)
        ol = [e["args"] for e in evs if e.get("name") == "gpuprof.outline"]
        by_step = [a for a in ol if a["closed_by"] == "step"]
        self.assertEqual([a["step"] for a in by_step], list(range(1, len(by_step) + 1)))
        self.assertGreaterEqual(len(by_step), steps)
        for a in by_step:
            self.assertEqual(a["allocated_peak"], step_peak(a["step"]), a)
            self.assertEqual(a["allocated"], 8 * MIB + 512)
            self.assertEqual(a["by_layer"], {"(no layer)": a["allocated_peak"]})
            self.assertEqual(a["by_category"], {"other": a["allocated_peak"]})
            self.assertLessEqual(a["begin_ns"], a["peak_ns"])
        return ol

    def test_window_end(self):
        trace = os.path.join(self.tmp, "job.json.gz")
        p = subprocess.run([EXIT_JOB, RECORDER, "exit"], capture_output=True, text=True, timeout=60,
                           env=env_for(trace, {"GPUPROF_WINDOW_S": "1"}), cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        found = glob.glob(os.path.join(self.tmp, "job.*.json.gz"))
        self.assertEqual(len(found), 1, found)
        with gzip.open(found[0], "rt") as f:
            doc = json.load(f)  # one gzip member, one JSON array
        ol = self.check_outline(doc, 6)
        self.assertEqual(ol[-1]["closed_by"], "end")
        self.assertEqual(doc[-1]["name"], "gpuprof.end")
        self.assertEqual(doc[-2]["name"], "gpuprof.dump")
        printed = steps_printed(p.stdout)
        d = analyze(found[0])["devices"][0]
        self.assertEqual(d["steps"]["count"], 6)
        self.assertEqual(d["summary"]["allocated"]["peak"], printed[-1][1])
        # the analysis reads the outline: the run's steps and its peak
        o = d["outline"]
        self.assertEqual((o["records"], o["steps"], o["first_step"], o["last_step"]), (7, 6, 1, 6))
        self.assertEqual((o["allocated_peak"], o["peak_step"], o["dump"]), (printed[-1][1], 3, "end"))
        self.assertEqual(o["by_category"], [{"name": "other", "bytes": o["allocated_peak"], "share": 1.0}])
        self.assertEqual([p["peak"] for p in d["steps"]["series"]], [step_peak(n) for n in range(1, 7)])

    def run_flight(self, how, extra):
        """Runs the job under the flight recorder; (stdout, stderr, the
        trace's events, {reason: the dump's path})."""
        trace = os.path.join(self.tmp, "job.json.gz")
        env = {"GPUPROF_WINDOW_S": "60"}
        env.update(extra)
        p = subprocess.run([EXIT_JOB, RECORDER, how], capture_output=True, text=True, timeout=60,
                           env=env_for(trace, env), cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        dumps = {}
        for path in glob.glob(os.path.join(self.tmp, "job.*.dump*.json.gz")):
            with gzip.open(path, "rt") as f:
                doc = json.load(f)
            dumps[[e["args"]["reason"] for e in doc if e.get("name") == "gpuprof.dump"][0]] = path
        main = [x for x in glob.glob(os.path.join(self.tmp, "job.*.json.gz")) if ".dump" not in x]
        with gzip.open(main[0], "rt") as f:
            return p.stdout, p.stderr, json.load(f), dumps

    def test_window_steps(self):
        """--dump-steps 4-5: a dump from step 4's start (after step:3) to
        step 5's mark, whole, though the window holds the run: its peak is
        those steps', not step 3's larger one."""
        out, err, whole, dumps = self.run_flight("exit", {"GPUPROF_DUMP_STEPS": "4-5"})
        self.assertEqual(sorted(dumps), ["steps"], err)
        d = analyze(dumps["steps"])["devices"][0]
        self.assertEqual(d["summary"]["allocated"]["peak"], max(step_peak(4), step_peak(5)))
        with gzip.open(dumps["steps"], "rt") as f:
            marks = [e["name"] for e in json.load(f) if e.get("cat") == "nvtx" and e.get("ph") == "i"]
        # the replay's step:3 (the step its blocks were made in) and the
        # range's own marks; never step 6's
        self.assertEqual([m for m in marks if m.startswith("step:")][-2:], ["step:4", "step:5"])
        self.assertNotIn("step:6", marks)

    def test_window_threshold(self):
        """--dump-at 20MiB: PyTorch's reserved crosses it at step 3 (8 MiB a
        step): one dump, while the job goes on."""
        out, err, whole, dumps = self.run_flight("reserve", {"GPUPROF_DUMP_AT": "20MiB"})
        self.assertEqual(sorted(dumps), ["threshold"], err)
        d = analyze(dumps["threshold"])["devices"][0]
        self.assertGreaterEqual(d["summary"]["reserved"]["peak"], 24 << 20)
        self.assertLess(d["outline"]["last_step"], 6)
        self.assertEqual(analyze_doc_outline(whole)["reserved_peak"], 48 << 20)

    def test_window_signal(self):
        """SIGUSR1: a dump beside the trace while the job goes on, holding
        the outline so far and the window; then SIGTERM ends the job, and
        its trace is finished."""
        trace = os.path.join(self.tmp, "job.json.gz")
        outp = os.path.join(self.tmp, "out")
        with open(outp, "w") as out_f, open(os.path.join(self.tmp, "err"), "w") as err_f:
            p = subprocess.Popen([EXIT_JOB, RECORDER, "run"], stdout=out_f, stderr=err_f,
                                 env=env_for(trace, {"GPUPROF_WINDOW_S": "1"}), cwd=self.tmp)
        try:
            time.sleep(2.5)
            asked = time.time()
            p.send_signal(signal.SIGUSR1)
            time.sleep(1.0)
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=20)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        with open(os.path.join(self.tmp, "err")) as f:
            err = f.read()
        dumps = glob.glob(os.path.join(self.tmp, "job.*.dump1.json.gz"))
        self.assertEqual(len(dumps), 1, err)
        self.assertIn("flight recorder: the last 1 s written to", err)
        with gzip.open(dumps[0], "rt") as f:
            doc = json.load(f)
        with open(outp) as f:
            printed = steps_printed(f.read())
        before = [n for n, _, t in printed if t < asked - 1.2]
        self.check_outline(doc, len(before))
        self.assertEqual([e["args"]["reason"] for e in doc if e.get("name") == "gpuprof.dump"], ["signal"])
        d = analyze(dumps[0])["devices"][0]
        self.assertGreaterEqual(d["outline"]["steps"], len(before))
        self.assertEqual(d["outline"]["dump"], "signal")
        self.assertIsNotNone(d["outline"]["window_t"])
        # the job went on: its own trace has more steps than the dump
        main = [x for x in glob.glob(os.path.join(self.tmp, "job.*.json.gz")) if ".dump" not in x]
        with gzip.open(main[0], "rt") as f:
            whole = json.load(f)
        self.assertGreater(len(self.check_outline(whole, 1)), d["outline"]["records"])

    def test_window_run_dir(self):
        """SIGUSR1 to the launcher of a run directory: every process dumps
        at the same step, the one the launcher asked for (two jobs half a
        second apart, stepping at their own pace); the run's analysis
        lists the processes' traces, not the dumps."""
        run = os.path.join(self.tmp, "run")
        env = env_for(os.path.join(self.tmp, "unused.json.gz"), {"GPUPROF_INJECT_LIB": RECORDER})
        env.pop("GPUPROF_OUTPUT")
        job = "%s %s run" % (EXIT_JOB, RECORDER)
        p = subprocess.Popen([GP, "--trace", "--window", "5", "-o", run + "/", "--", "sh", "-c",
                              "%s > a.out & sleep 0.5; %s > b.out & wait" % (job, job)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=self.tmp)
        pids = []
        try:
            time.sleep(3.0)
            p.send_signal(signal.SIGUSR1)
            deadline = time.time() + 15
            while time.time() < deadline and len(glob.glob(os.path.join(run, "*.dump1.json.gz"))) < 2:
                time.sleep(0.1)
            time.sleep(0.5)
            pids = [int(os.path.basename(x).split(".")[0]) for x in glob.glob(os.path.join(run, ".flight", "*.step"))]
            for pid in pids:
                os.kill(pid, signal.SIGTERM)
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(len(pids), 2, err)
        m = [l for l in err.splitlines() if "SIGUSR1:" in l]
        self.assertEqual(len(m), 1, err)
        asked = int(m[0].rsplit(" ", 1)[1])
        dumps = sorted(glob.glob(os.path.join(run, "*.dump1.json.gz")))
        self.assertEqual(len(dumps), 2, err)
        for path in dumps:
            with gzip.open(path, "rt") as f:
                doc = json.load(f)
            marks = [e["name"] for e in doc if e.get("cat") == "nvtx" and e["name"].startswith("step:")]
            self.assertEqual(marks[-1], "step:%d" % asked, path)
        self.assertIn("flight recorder dumps", err)
        self.assertFalse(os.path.exists(os.path.join(run, ".flight")), "the launcher leaves RUN/.flight/")
        a = subprocess.run([GP, "analyze", "--json", run + "/"], capture_output=True, text=True)
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(sorted(t["path"].rsplit("/", 1)[1] for t in json.loads(a.stdout)["traces"]),
                         sorted(os.path.basename(x) for x in glob.glob(os.path.join(run, "proc.*.json.gz"))
                                if ".dump" not in x))

    def test_window_sigkill(self):
        """Killed: the file holds the meta and the outline of every step
        printed 1.5 s before the kill (flushed each second), and recover
        ends it."""
        trace = os.path.join(self.tmp, "job.json.gz")
        outp = os.path.join(self.tmp, "out")
        with open(outp, "w") as out_f:
            p = subprocess.Popen([EXIT_JOB, RECORDER, "run"], stdout=out_f, stderr=subprocess.DEVNULL,
                                 env=env_for(trace, {"GPUPROF_WINDOW_S": "1"}), cwd=self.tmp)
        try:
            time.sleep(3.0)
            killed = time.time()
            p.send_signal(signal.SIGKILL)
            p.wait()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        path = glob.glob(os.path.join(self.tmp, "job.*.json.gz"))[0]
        with open(outp) as f:
            printed = steps_printed(f.read())
        due = [n for n, _, t in printed if t < killed - 1.5]
        self.assertTrue(due)
        self.check_outline(events_on_disk(path), len(due))
        fixed = os.path.join(self.tmp, "fixed.json.gz")
        r = subprocess.run([GP, "recover", path, "-o", fixed], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with gzip.open(fixed, "rt") as f:
            self.check_outline(json.load(f), len(due))



class TraceCap(unittest.TestCase):
    """GPUPROF_TRACE_CAP: the default trace is written in full up to its
    cap, then the start is kept as STEM.dump0 and the trace goes on as a
    flight recorder: the outline of every step, the last window."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gp_cap_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_cap(self, cap):
        trace = os.path.join(self.tmp, "job.json.gz")
        env = {"GPUPROF_SEAL_MS": "100"}
        if cap is not None:
            env["GPUPROF_TRACE_CAP"] = cap
        p = subprocess.run([EXIT_JOB, RECORDER, "cap"], capture_output=True, text=True, timeout=60,
                           env=env_for(trace, env), cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p, steps_printed(p.stdout), sorted(os.listdir(self.tmp))

    def test_under_the_cap(self):
        """Under the cap (the default 1 GiB, and off) the trace is the whole
        run, as ever, and nothing else is left beside it."""
        for cap in (None, "off"):
            p, printed, names = self.run_cap(cap)
            self.assertEqual(len(names), 1, names)
            self.assertNotIn("cap", p.stderr)
            with gzip.open(os.path.join(self.tmp, names[0]), "rt") as f:
                doc = json.load(f)
            self.assertFalse([e for e in doc if e.get("name", "").startswith("gpuprof.") and
                              e["name"] in ("gpuprof.outline", "gpuprof.cap", "gpuprof.window", "gpuprof.dump")])
            d = analyze(os.path.join(self.tmp, names[0]))["devices"][0]
            self.assertEqual(d["steps"]["count"], len(printed))
            os.unlink(os.path.join(self.tmp, names[0]))

    def test_at_the_cap(self):
        p, printed, names = self.run_cap("64KiB")
        self.assertEqual(len(printed), 24)
        self.assertEqual(len(names), 2, names)
        start_name = [n for n in names if ".dump0." in n][0]
        main_name = [n for n in names if ".dump" not in n][0]
        self.assertEqual(start_name, main_name.replace(".json.gz", ".dump0.json.gz"))
        self.assertIn("reached its size cap (64 KiB", p.stderr)
        self.assertIn(start_name, p.stderr)
        start_path, main_path = (os.path.join(self.tmp, n) for n in (start_name, main_name))
        with gzip.open(start_path, "rt") as f:
            start = json.load(f)  # one gzip member, one JSON array
        with gzip.open(main_path, "rt") as f:
            main = json.load(f)
        # the start: the run up to the cap, whole, ended as a dump
        self.assertGreaterEqual(os.path.getsize(start_path), 64 << 10)
        self.assertEqual(start[0]["name"], "gpuprof.meta")
        self.assertEqual([e["name"] for e in start[-2:]], ["gpuprof.dump", "gpuprof.end"])
        self.assertEqual((start[-2]["args"]["reason"], start[-2]["args"]["seq"]), ("cap", 0))
        start_steps = [int(e["name"][5:]) for e in start if e.get("name", "").startswith("step:")]
        self.assertEqual(start_steps, list(range(1, len(start_steps) + 1)))
        self.assertTrue(2 <= len(start_steps) < 24, start_steps)
        a = analyze(start_path)
        self.assertEqual(a["traces"][0]["clean_exit"], None)
        self.assertTrue(any("size cap" in n for n in a["traces"][0]["notes"]), a["traces"][0]["notes"])
        d = a["devices"][0]
        self.assertEqual(d["summary"]["allocated"]["peak"], max(step_peak(n) for n in start_steps))
        # the trace: the outline of every step, the cap, the last window
        self.assertEqual(main[0]["name"], "gpuprof.meta")
        self.assertEqual(sum(e.get("name") == "gpuprof.meta" for e in main), 1)
        caps = [e for e in main if e.get("name") == "gpuprof.cap"]
        self.assertEqual(len(caps), 1)
        self.assertEqual(caps[0]["args"]["start"], start_name)
        self.assertEqual(caps[0]["args"]["cap_bytes"], 64 << 10)
        self.assertEqual(caps[0]["args"]["window_s"], 60)
        self.assertGreaterEqual(caps[0]["args"]["bytes"], 64 << 10)
        names_in_order = [e.get("name") for e in main]
        self.assertLess(names_in_order.index("gpuprof.cap"), names_in_order.index("gpuprof.window"))
        ol = [e["args"] for e in main if e.get("name") == "gpuprof.outline"]
        by_step = [o for o in ol if o["closed_by"] == "step"]
        self.assertEqual([o["step"] for o in by_step], list(range(1, 25)))
        for o in by_step:
            self.assertEqual(o["allocated_peak"], step_peak(o["step"]), o)
        self.assertEqual(ol[-1]["closed_by"], "end")
        self.assertEqual(main[-2]["name"], "gpuprof.dump")
        self.assertEqual(main[-2]["args"]["reason"], "end")
        self.assertEqual(main[-1]["name"], "gpuprof.end")
        self.assertTrue(main[-1]["args"]["clean"])
        a = analyze(main_path)
        self.assertTrue(a["traces"][0]["clean_exit"])
        self.assertTrue(any(start_name in n and "size cap" in n for n in a["traces"][0]["notes"]))
        d = a["devices"][0]
        self.assertEqual(d["outline"]["steps"], 24)
        self.assertEqual(d["outline"]["allocated_peak"], printed[-1][1])
        self.assertEqual([s["peak"] for s in d["steps"]["series"]], [step_peak(n) for n in range(1, 25)])


if __name__ == "__main__":
    STUB_DIR, RECORDER, EXIT_JOB, JOB_LIB, GP = [os.path.abspath(a) for a in sys.argv[1:6]]
    PYTHON = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] else None
    del sys.argv[1:]
    unittest.main(verbosity=2)
