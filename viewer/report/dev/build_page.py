#!/usr/bin/env python3
"""Assemble a report page the way `gpuprof report` does (viewer/report/page.c),
for developing the page without rebuilding gpuprof: the same template, the
same JSON escaping, the same Content-Security-Policy hashes.

  build_page.py RUN [--base BASE.json] [--compare CMP.json]
                [--synth-timeline] -o OUT.html

RUN is a gpuprof.analyze/1 document (`gpuprof analyze --json`), a whole
gpuprof.report/1 document, or a page that `gpuprof report` wrote (its data
is taken out and put into a page made of the assets as they are now). --synth-timeline gives every device that has no `timeline` a made-up
one (a saw-tooth per step with phases), so that the charts can be developed
against analyze's golden summaries, which have none.
"""
import argparse
import base64
import hashlib
import json
import math
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.dirname(HERE)


def read(*parts):
    with open(os.path.join(REPORT, *parts), encoding="utf-8") as f:
        return f.read()


def script_json(doc):
    """JSON safe inside <script>: as the C side writes it."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    # a lone surrogate (only a \u escape can carry one) stays an escape
    text = re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def sha256(text):
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def page(doc):
    style = read("vendor", "uplot", "uPlot.min.css") + "\n" + read("assets", "report.css")
    # each library after its license, in a comment, as page.c writes them
    script = "".join(["/*! uPlot (https://github.com/leeoniya/uPlot)\n", read("vendor", "uplot", "LICENSE"),
                      "\n*/\n", read("vendor", "uplot", "uPlot.iife.min.js"), "\n",
                      "/*! d3-hierarchy (https://github.com/d3/d3-hierarchy)\n",
                      read("vendor", "d3-hierarchy", "LICENSE"), "\n*/\n",
                      read("vendor", "d3-hierarchy", "d3-hierarchy.min.js"), "\n",
                      read("assets", "report.js")])
    for bad in ("</script", "<!--"):
        assert bad not in script.lower(), bad
    assert "</style" not in style.lower()
    csp = ("default-src 'none'; script-src '%s'; style-src '%s'; img-src data:; base-uri 'none'; "
           "form-action 'none'" % (sha256(script), sha256(style)))
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8">\n'
            '<meta http-equiv="Content-Security-Policy" content="%s">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<title>gpuprof report</title>\n'
            '<style>%s</style>\n'
            '</head><body>\n'
            '<div id="app"></div>\n'
            '<script type="application/json" id="gpuprof-data">%s</script>\n'
            '<script>%s</script>\n'
            '</body></html>\n' % (csp, style, script_json(doc), script))


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
    load = lambda p: json.load(open(p, encoding="utf-8")) if p else None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.lstrip().lower().startswith("<!doctype"):
        start = text.index('id="gpuprof-data">') + len('id="gpuprof-data">')
        doc = json.loads(text[start:text.index("</script>", start)])
    else:
        doc = json.loads(text)
    if doc.get("schema") != "gpuprof.report/1":
        doc = {"schema": "gpuprof.report/1", "generator": "gpuprof dev page",
               "inputs": [t.get("path") for t in doc.get("traces", [])],
               "run": doc, "base": load(base), "compare": load(compare)}
    return doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--base")
    ap.add_argument("--compare")
    ap.add_argument("--synth-timeline", action="store_true")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    doc = load_doc(a.run, a.base, a.compare)
    if a.synth_timeline:
        for side in ("run", "base"):
            for dev in (doc.get(side) or {}).get("devices") or []:
                if "timeline" not in dev:
                    dev["timeline"] = synth_timeline(dev)
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(page(doc))


if __name__ == "__main__":
    main()
