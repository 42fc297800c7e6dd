#!/usr/bin/env python3
"""A report page from any data, for developing the page's code: made by
gpuprof_page (dev/gpuprof_page.c), which calls the page builder that
`gpuprof report` calls (viewer/report/page.c), so the template, the JSON
escaping and the Content-Security-Policy hashes are the command's own.

  build_page.py RUN [--base BASE.json] [--compare CMP.json]
                [--synth-timeline] [--build DIR | --page-tool PATH] -o OUT.html

RUN is a gpuprof.analyze/1 document (`gpuprof analyze --json`), a whole
gpuprof.report/1 document, or a page that `gpuprof report` wrote (its data
is taken out, as it is, and put into a page of the page's code as it is
now). --synth-timeline gives every device that has no `timeline` a made-up
one (a saw-tooth per step with phases), so that the charts can be developed
against analyze's golden summaries, which have none.

The page's code is compiled in, so gpuprof_page is rebuilt first (`cmake
--build DIR --target gpuprof_page`; DIR: --build, else $GPUPROF_BUILD, else
build/ci of the repository): a page always has the modules of assets/js/ as
they are. --page-tool names a gpuprof_page to run as it is.
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def data_json(doc):
    """The data as JSON text (UTF-8; page.c escapes what could end its
    element)."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    # a lone surrogate (only a \u escape can carry one) stays an escape
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text)


def page_tool(build=None):
    """gpuprof_page, rebuilt in the build directory so that it holds the
    page's code as it is now."""
    build = os.path.abspath(build or os.environ.get("GPUPROF_BUILD") or os.path.join(ROOT, "build", "ci"))
    p = subprocess.run(["cmake", "--build", build, "--target", "gpuprof_page"], capture_output=True, text=True)
    if p.returncode:
        sys.exit("build_page.py: cmake --build %s --target gpuprof_page failed:\n%s"
                 % (build, (p.stdout + p.stderr)[-3000:]))
    return os.path.join(build, "viewer", "report", "gpuprof_page")


def write_page(tool, data, out):
    """The page of data (JSON text) at out, by gpuprof_page."""
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".json", delete=False) as f:
        f.write(data)
    try:
        p = subprocess.run([tool, f.name, out], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode:
        sys.exit("build_page.py: %s" % p.stderr.strip())


# ---- a made-up timeline, for summaries that have none ----

PHASES = ["none", "forward", "backward", "optimizer", "zero_grad"]


def synth_timeline(dev, n=2000, seed=1):
    rng = random.Random(seed)
    summary = dev.get("summary") or {}
    series = (dev.get("steps") or {}).get("series") or []
    times = [s["t"] for s in series]
    peak = dev.get("peak") or {}
    for t in [peak.get("t")] + [o.get("t") for o in dev.get("ooms") or []]:
        if isinstance(t, (int, float)):
            times.append(t)
    end = max(times + [0.001]) * 1.04
    dt = end / n
    alloc_peak = (summary.get("allocated") or {}).get("peak") or peak.get("bytes") or 0
    other = (summary.get("other") or {}).get("peak") or 0
    torch = dev.get("mode") != "cuda"
    # step boundaries and live bytes at each: what stays between steps
    bounds = [(0.0, series[0]["live"] * 0.9 if series else alloc_peak * 0.3)]
    bounds += [(s["t"], s["live"]) for s in series]
    base_of = lambda t: next((b for (tb, b) in reversed(bounds) if tb <= t), bounds[0][1])
    swing = max(alloc_peak - max(b for _, b in bounds), alloc_peak * 0.2)
    amin, amax, ph = [], [], []
    for i in range(n):
        t = i * dt
        k = max(j for j, (tb, _) in enumerate(bounds) if tb <= t)
        t_start = bounds[k][0]
        t_end = bounds[k + 1][0] if k + 1 < len(bounds) else t_start + (bounds[-1][0] - bounds[-2][0]
                                                                     if len(bounds) > 2 else end)
        frac = min(1.0, (t - t_start) / max(t_end - t_start, 1e-9))
        if not torch:
            phase, shape = 0, 0.5 + 0.5 * math.sin(frac * 6.28)
        elif frac < 0.05:
            phase, shape = 4, 0.0
        elif frac < 0.45:
            phase, shape = 1, (frac - 0.05) / 0.4
        elif frac < 0.8:
            phase, shape = 2, 1.0 - (frac - 0.45) / 0.35 * 0.9
        elif frac < 0.95:
            phase, shape = 3, 0.1 + 0.05 * rng.random()
        else:
            phase, shape = 0, 0.0
        hi = int(base_of(t) + swing * shape)
        amax.append(hi)
        amin.append(int(max(0, hi - swing * 0.08 * rng.random())))
        ph.append(phase)
    reserved = None
    res_peak = (summary.get("reserved") or {}).get("peak")
    if res_peak:
        run, rmax, rmin = 0, [], []
        for hi in amax:
            run = max(run, min(res_peak, int(hi * 1.1 / (2 << 20) + 1) * (2 << 20)))
            rmax.append(run)
            rmin.append(run)
        reserved = {"min": rmin, "max": rmax}
    top = reserved["max"] if reserved else amax
    return {"t0": 0.0, "dt": round(dt, 9), "n": n,
            "allocated": {"min": amin, "max": amax},
            "reserved": reserved,
            "other": {"max": [other] * n} if summary.get("other") is not None else None,
            "device": {"max": [v + other for v in top]},
            "phase": ph, "phases": PHASES if torch else ["none"]}


def load_doc(path, base=None, compare=None):
    """The gpuprof.report/1 document of a page, a report document, or an
    analyze document (with the base's and compare's documents given)."""
    return load(path, base, compare)[0]


def load(path, base=None, compare=None):
    """(document, text): load_doc's document, and the data's JSON text as a
    page holds it (None for any other input)."""
    read = lambda p: json.load(open(p, encoding="utf-8")) if p else None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    raw = None
    if text.lstrip().lower().startswith("<!doctype"):
        start = text.index('id="gpuprof-data">') + len('id="gpuprof-data">')
        raw = text[start:text.index("</script>", start)]
        doc = json.loads(raw)
    else:
        doc = json.loads(text)
    if doc.get("schema") != "gpuprof.report/1":
        raw = None
        doc = {"schema": "gpuprof.report/1", "generator": "gpuprof dev page",
               "inputs": [t.get("path") for t in doc.get("traces", [])],
               "run": doc, "base": read(base), "compare": read(compare)}
    return doc, raw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--base")
    ap.add_argument("--compare")
    ap.add_argument("--synth-timeline", action="store_true")
    ap.add_argument("--build", help="the build directory whose gpuprof_page is rebuilt and run")
    ap.add_argument("--page-tool", help="a gpuprof_page to run as it is")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    doc, raw = load(a.run, a.base, a.compare)
    if a.synth_timeline:
        for side in ("run", "base"):
            for dev in (doc.get(side) or {}).get("devices") or []:
                if "timeline" not in dev:
                    dev["timeline"] = synth_timeline(dev)
                    raw = None
    # a page's data as it was: the same page but for the code
    write_page(a.page_tool or page_tool(a.build), raw if raw is not None else data_json(doc), a.output)


if __name__ == "__main__":
    main()
