#!/usr/bin/env python3
"""The budget of `gpuprof report` on a long run: the page of a 10,000,000-
event trace (tests/report/make_traces.py's `large`) must be at most 10 MB
and should be ready in headless Chromium within 3 s.

  report_budget.py GPUPROF [--events N] [--trace PATH] [--keep DIR] [--rounds R]

Makes the trace (or takes --trace), times `gpuprof report` on it, and loads
the page in headless Chromium (chromium or chromium-browser on PATH, or
GPUPROF_CHROMIUM) R times (default 3). Prints one `name value` line each:

  events            events in the trace
  trace_bytes       its size, compressed
  make_s            seconds to make it (0 with --trace)
  report_s          seconds gpuprof report took (wall)
  report_cpu_s      ... of CPU time (user and system)
  page_bytes        the page's size
  page_budget_bytes 10000000
  ready_ms          the page's own time to ready: performance.now() when it
                    set its ready flag, as its self-test records it (median
                    of the rounds; "none" where the self-test has no time)
  ready_wall_s      a headless load of the page, until Chromium has dumped
                    its DOM, minus the same for a blank page (median)
  ready_target_s    3
  charts            the charts the page drew (its self-test)

Exit status: 0 when the page is within its size budget and became ready
(the ready flag set, no error in its self-test); 1 otherwise; 2 on bad
usage or no Chromium. The times are reported, not judged: they depend on
the machine (bench/RESULTS.md says where they were taken)."""
import argparse
import html
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "report"))
import make_traces  # noqa: E402

PAGE_BUDGET = 10 * 1000 * 1000
READY_TARGET_S = 3
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=5000"]


def chromium():
    for b in (os.environ.get("GPUPROF_CHROMIUM"), "chromium", "chromium-browser"):
        if b and shutil.which(b):
            return shutil.which(b)
    return None


def load(browser, page, tmp):
    """(wall seconds, ready flag, self-test or None) of one headless load."""
    profile = tempfile.mkdtemp(prefix="chromium.", dir=tmp)
    t0 = time.monotonic()
    p = subprocess.run([browser] + FLAGS + ["--user-data-dir=" + profile, "--dump-dom", "file://" + page],
                       capture_output=True, timeout=300)
    wall = time.monotonic() - t0
    shutil.rmtree(profile, ignore_errors=True)
    dom = p.stdout.decode("utf-8", "replace")
    ready = re.search(r"<html\b[^>]*\bdata-gpuprof-ready=\"1\"", dom) is not None
    m = re.search(r"<pre\b[^>]*\bid=\"gpuprof-selftest\"[^>]*>(.*?)</pre>", dom, re.S)
    selftest = None
    if m:
        try:
            selftest = json.loads(html.unescape(m.group(1)))
        except ValueError:
            selftest = None
    return wall, ready, selftest


def ready_ms(selftest):
    for k in ("ready_ms", "ms", "time_ms", "render_ms", "elapsed_ms"):
        if isinstance((selftest or {}).get(k), (int, float)):
            return float(selftest[k])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gpuprof")
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--trace", help="an existing trace instead of making one")
    ap.add_argument("--keep", help="a directory to keep the trace and the page in")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    browser = chromium()
    if not browser:
        print("report_budget: no chromium (nor chromium-browser) on PATH", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="gpuprof-report-budget.")
    work = a.keep or tmp
    os.makedirs(work, exist_ok=True)
    try:
        make_s = 0.0
        path = a.trace
        if not path:
            t0 = time.monotonic()
            path = make_traces.make("large", work, a.events)[0]
            make_s = time.monotonic() - t0
        page = os.path.join(os.path.abspath(work), "large.html")
        t0 = time.monotonic()
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([a.gpuprof, "report", path, "-o", page], capture_output=True, text=True)
        report_s = time.monotonic() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        report_cpu_s = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        if p.returncode != 0:
            print("report_budget: gpuprof report exit %d: %s" % (p.returncode, p.stderr.strip()), file=sys.stderr)
            return 1
        data_events = None
        m = re.search(r'"events":\s*(\d+)', open(page, encoding="utf-8").read())
        if m:
            data_events = int(m.group(1))
        blank = os.path.join(tmp, "blank.html")
        open(blank, "w").write("<!doctype html><html><head><title>blank</title></head><body></body></html>\n")
        walls, blanks, mss, ready, selftest = [], [], [], True, None
        for _ in range(max(1, a.rounds)):
            blanks.append(load(browser, blank, tmp)[0])
            w, r, st = load(browser, page, tmp)
            walls.append(w)
            ready = ready and r and st is not None and not st.get("errors")
            selftest = st or selftest
            if ready_ms(st) is not None:
                mss.append(ready_ms(st))
        page_bytes = os.path.getsize(page)
        rows = [
            ("events", data_events if data_events is not None else a.events),
            ("trace_bytes", os.path.getsize(path)),
            ("make_s", "%.2f" % make_s),
            ("report_s", "%.2f" % report_s),
            ("report_cpu_s", "%.2f" % report_cpu_s),
            ("page_bytes", page_bytes),
            ("page_budget_bytes", PAGE_BUDGET),
            ("ready_ms", "%.0f" % statistics.median(mss) if mss else "none"),
            ("ready_wall_s", "%.2f" % max(0.0, statistics.median(walls) - statistics.median(blanks))),
            ("ready_target_s", READY_TARGET_S),
            ("charts", ",".join("%s:%s" % (c.get("kind"), c.get("series"))
                                for c in (selftest or {}).get("charts") or [])),
        ]
        for k, v in rows:
            print("%s %s" % (k, v))
        ok = True
        if page_bytes > PAGE_BUDGET:
            print("report_budget: the page is %d bytes, over its budget of %d" % (page_bytes, PAGE_BUDGET),
                  file=sys.stderr)
            ok = False
        if not ready:
            print("report_budget: the page did not become ready (ready flag, self-test without errors): %r"
                  % (selftest,), file=sys.stderr)
            ok = False
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
