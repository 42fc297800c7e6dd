"""What must hold of every analysis, over every trace the project has: the
bundled samples (samples/traces/), the real traces and run directories of
tests/data/, every synthetic scenario of synth.py and the report's synthetic
traces (tests/report/make_traces.py). For each input, `gpuprof analyze`
(text), `gpuprof analyze --json` and the data of `gpuprof report`'s page:

  same numbers   the page's data is analyze's JSON (the page draws from it);
                 the text says the JSON's numbers, formatted as units.h does
                 (the summary's rows, the peak, what was live then, the
                 counts, the failed allocations, the leak's verdict)
  counts add up  allocations made = freed + live at the end; at the peak,
                 the categories, phases, APIs and layer tree share out
                 exactly what was live; shares sum to 1
  steps          every step is the program's (CATEGORIES.md, "Step"): before
                 step 1 is step 1 "before"; after the last mark, "after" it,
                 or the step that began there; never beyond
  device total   reserved (where known) plus other: never below what the
                 framework held, at the summary, the peak and each failure
  no empty part  no heading without a row under it, no line without text

  test_invariants.py GPUPROF all [--list]
"""
import functools
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "report"))
import checks  # noqa: E402
import synth  # noqa: E402
from checks import check, eq, report  # noqa: E402

GP = None
TMP = None
SCENARIOS = ("train", "teardown", "leak", "warmup", "oom", "native", "native_oom", "hook", "hook_leak",
             "hook_oom", "multi", "ranks", "many", "cuda", "order")
REPORT_KINDS = ("train", "oom", "cuda", "wide")


def gp(*args):
    e = dict(os.environ)
    e["NO_COLOR"] = "1"
    p = subprocess.run([GP] + list(args), cwd=TMP, capture_output=True, env=e, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


@functools.lru_cache(maxsize=None)
def fmt(v):
    """v as the text report writes it: units.h's an_fmt_bytes itself, run by
    tests/report/print_bytes.c (GPUPROF_PRINT_BYTES, which CTest sets)."""
    printer = os.environ.get("GPUPROF_PRINT_BYTES")
    if not printer:
        raise SystemExit("GPUPROF_PRINT_BYTES must name tests/report's print_bytes (CTest sets it)")
    return subprocess.run([printer, str(int(v))], capture_output=True, text=True, check=True,
                          timeout=30).stdout.strip()


def step_text(step, when):
    """result.c's gp_an_step_text."""
    if step is None:
        return ""
    return {"in": "step", "before": "before step", "after": "after step"}.get(when, "step?") + " %d" % step


def inputs():
    """(name, [paths]) of every input: a trace, or a run directory."""
    out = []
    for p in sorted(glob.glob(os.path.join(ROOT, "samples", "traces", "*.json.gz"))):
        out.append(("samples/" + os.path.basename(p), [p]))
    for d in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "*"))):
        if not os.path.isdir(d):
            continue
        if glob.glob(os.path.join(d, "manifest.*.json")):
            out.append(("data/" + os.path.basename(d), [d]))
            for p in sorted(glob.glob(os.path.join(d, "rank*.json.gz"))):
                out.append(("data/%s/%s" % (os.path.basename(d), os.path.basename(p)), [p]))
        else:
            for p in sorted(glob.glob(os.path.join(d, "*.json.gz"))):
                out.append(("data/%s/%s" % (os.path.basename(d), os.path.basename(p)), [p]))
    sdir = os.path.join(TMP, "synth")
    os.makedirs(sdir, exist_ok=True)
    for name in SCENARIOS:
        before = set(os.listdir(sdir)) if os.path.isdir(sdir) else set()
        synth.scenario(name, sdir)
        made = sorted(set(os.listdir(sdir)) - before)
        paths = [os.path.join(sdir, f) for f in made if f.endswith(".json.gz") or
                 os.path.isdir(os.path.join(sdir, f))]
        if not check(paths, "synth %s wrote a trace" % name):
            continue
        if name == "order":  # one run written three ways: three inputs
            out.extend(("synth/%s/%s" % (name, os.path.basename(p)), [p]) for p in paths)
        else:
            out.append(("synth/" + name, paths))
    import make_traces  # noqa: E402 (tests/report)
    for kind in REPORT_KINDS:
        out.append(("report/" + kind, make_traces.make(kind, os.path.join(TMP, "report", kind))))
    return out


def walk(o, path=""):
    """(path, dict) of every object in a JSON document."""
    if isinstance(o, dict):
        yield path, o
        for k, v in o.items():
            yield from walk(v, path + "." + k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from walk(v, "%s[%d]" % (path, i))


def page_run(name, paths):
    """The run document in the data of report's page for paths."""
    page = os.path.join(TMP, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".html")
    rc, _, err = gp("report", "-o", page, *paths)
    if not check(rc == 0, "%s: report: exit %d: %s" % (name, rc, err.strip()[-300:])):
        return None
    text = open(page, encoding="utf-8").read()
    os.unlink(page)
    m = re.search(r'<script[^>]*id="gpuprof-data"[^>]*>(.*?)</script>', text, re.S)
    if not check(m, "%s: the page has its data" % name):
        return None
    return json.loads(m.group(1))["run"]


# what the page's data has beyond analyze --json's: memory over time, the
# moments and the allocations they name
PAGE_ONLY = ("timeline", "moments", "bands", "band_stacks")


def strip_timeline(o):
    if isinstance(o, dict):
        return {k: strip_timeline(v) for k, v in o.items() if k not in PAGE_ONLY}
    if isinstance(o, list):
        return [strip_timeline(v) for v in o]
    return o


def check_moments(name, doc, run):
    """The moments of the page's data (SCHEMA.md, "Moments"): in time
    order, none above the peak, and the one with the most is the peak, to
    the byte, with the peak's categories; every one's largest name bands
    that were alive then, and its groups add up to what was alive."""
    for d, page in zip(doc["devices"], run["devices"]):
        ms, bands, peak = page.get("moments") or [], page.get("bands") or [], d.get("peak") or {}
        if not ms:
            continue
        who = "%s: process %s GPU %s" % (name, d["pid"], d["device"])
        check([m["from"] for m in ms] == sorted(m["from"] for m in ms), "%s: moments in time order" % who)
        # the stretches lie end to end over the device's memory events,
        # each its moment within it
        check(ms[0]["first_event"] == 0 and all(a["first_event"] + a["events"] == b["first_event"] for a, b in zip(ms, ms[1:])),
              "%s: the moments' stretches lie end to end over the memory events" % who)
        check(all(m["events"] >= 1 and m["from"] - 1e-6 <= m["t"] <= m["to"] + 1e-6 for m in ms),
              "%s: every moment within its stretch" % who)
        widths = {m["events"] for m in ms[:-1]}
        check(len(widths) <= 1 and ms[-1]["events"] <= ms[0]["events"] and len(ms) <= 256,
              "%s: at most 256 stretches of as many events (the last no wider)" % who)
        stacks = page.get("band_stacks")
        check(stacks is None or (len(stacks) == len(bands) and any(stacks) and
                                 all(st is None or (st and all(isinstance(f, str) for f in st)) for st in stacks)),
              "%s: a stack a band, where the trace has them" % who)
        for st, b in zip(stacks or [], bands):
            check(st is None or b.get("line") == st[0], "%s: a band's stack begins at its line (%r, %r)" % (who, b.get("line"), st and st[0]))
        top = max(ms, key=lambda m: m["bytes"])
        check(all(m["bytes"] <= peak.get("bytes", 0) for m in ms), "%s: no moment above the peak" % who)
        check(top["bytes"] == peak.get("bytes") and top["live_bytes"] == peak.get("live_bytes"),
              "%s: the most live moment is the peak (%s, %s against %s, %s)"
              % (who, top["bytes"], top["live_bytes"], peak.get("bytes"), peak.get("live_bytes")))
        # a device's moments list 10,000 segments and 50,000 blocks at most,
        # the most live one all of its own segments
        listed = sum(len(m.get("segments") or []) for m in ms)
        blocks = sum(len(g.get("blocks") or []) for m in ms for g in m.get("segments") or [])
        check(blocks <= 50000, "%s: %d blocks listed" % (who, blocks))
        check(listed <= max(10000, len(top.get("segments") or [])) and (top.get("reserved") is None or top.get("segments") is not None),
              "%s: %d segments listed, the most live moment's all" % (who, listed))
        check(top.get("reserved") is None or top["reserved"] == peak.get("reserved"),
              "%s: the most live moment's segments are reserved at the peak (%s against %s)"
              % (who, top.get("reserved"), peak.get("reserved")))
        check([(c["category"], c["bytes"]) for c in top.get("by_category") or []] ==
              [(c["category"], c["bytes"]) for c in peak.get("by_category") or []],
              "%s: the most live moment's categories are the peak's" % who)
        for m in ms:
            for k in m["largest"]:
                b = bands[k] if 0 <= k < len(bands) else None
                check(b is not None and b["t"] <= m["t"] + 1e-6 and (b["freed_t"] is None or b["freed_t"] >= m["t"] - 1e-6),
                      "%s: a band the moment at %s names was alive then (%r)" % (who, m["t"], b))
            segs = m.get("segments")
            check(segs is None or m.get("reserved") is not None, "%s: the moment at %s: segments with reserved" % (who, m["t"]))
            if segs is not None:
                check(sum(g["bytes"] for g in segs) == m["reserved"], "%s: the moment at %s: the segments add up to reserved"
                      % (who, m["t"]))
                check(sum(g["used"] for g in segs) <= m["live_bytes"], "%s: the moment at %s: blocks within what was alive"
                      % (who, m["t"]))
                for g in segs:
                    if g["blocks"] is None:
                        continue
                    at = 0
                    for off, size, cat in g["blocks"]:
                        check(off >= at and off + size <= g["bytes"] and -1 <= cat < len(m.get("by_category") or []),
                              "%s: the moment at %s: a block in its segment, after the one before (%s)" % (who, m["t"], g["addr"]))
                        at = off + size
                    check(sum(b[1] for b in g["blocks"]) == g["used"] and len(g["blocks"]) == g["block_count"],
                          "%s: the moment at %s: a segment's blocks add up to its used" % (who, m["t"]))
            for key in ("by_category", "by_layer", "by_line"):
                if m.get(key) is not None:
                    check(sum(x["bytes"] for x in m[key]) == m["live_bytes"],
                          "%s: the moment at %s: %s adds up to what was alive" % (who, m["t"], key))


def check_oom_segments(name, doc):
    """A failed allocation's segments (native mode with the hook): blocks
    inside and after one another, adding up to each segment's used; all
    of them within what was live then."""
    for d in doc["devices"]:
        for o in d.get("ooms") or []:
            segs = o.get("segments")
            if segs is None:
                continue
            who = "%s: process %s, the failure at %s" % (name, d["pid"], o["t"])
            check(sum(g["used"] for g in segs) <= o["live_bytes"], "%s: its segments' blocks within what was live" % who)
            for g in segs:
                at = 0
                for off, size, cat in g["blocks"] or []:
                    check(off >= at and off + size <= g["bytes"] and -1 <= cat < len(o.get("by_category") or []),
                          "%s: a block in its segment %s" % (who, g["addr"]))
                    at = off + size
                check(g["blocks"] is not None and sum(b[1] for b in g["blocks"]) == g["used"],
                      "%s: segment %s: its blocks add up to its used" % (who, g["addr"]))


def check_steps(name, doc):
    """Every step within the program's steps (CATEGORIES.md, "Step")."""
    for d in doc["devices"]:
        st = d.get("steps") or {}
        count, unfinished = st.get("count", 0), st.get("unfinished", False)
        where = "%s: GPU %s of process %s" % (name, d.get("device"), d.get("pid"))
        for path, o in walk(d):
            for key, wkey in (("step", "step_when"), ("first_oom_step", "first_oom_step_when")):
                if key not in o or path.endswith(".steps") or "series" in path:
                    continue
                if path.endswith("growth") or path.endswith("leak") or path.endswith("survivors"):
                    continue
                s, w = o[key], o.get(wkey, "missing")
                if s is None:
                    check(w is None, "%s%s: %s null, %s %r" % (where, path, key, wkey, w))
                    continue
                if not check(w in ("in", "before", "after"), "%s%s: %s %r" % (where, path, wkey, w)):
                    continue
                if w == "before":
                    eq(s, 1, "%s%s: before step 1" % (where, path))
                elif w == "after":
                    eq(s, count, "%s%s: after the last step, %d" % (where, path, count))
                else:
                    check(1 <= s <= count + (1 if unfinished else 0),
                          "%s%s: step %d within the program's %d steps%s" % (
                              where, path, s, count, " and the one it was in" if unfinished else ""))
        for p in st.get("series") or []:
            check(1 <= p["step"] <= count, "%s: steps.series: step %d of %d marks" % (where, p["step"], count))


def near(a, b):
    return abs(a - b) <= 1e-3 + 1e-9 * abs(b)


def check_counts(name, doc):
    """The counts add up: the summary's, and what is shared out at the peak."""
    for d in doc["devices"]:
        where = "%s: GPU %s of process %s" % (name, d.get("device"), d.get("pid"))
        s = d["summary"]
        other = (s.get("other") or {}).get("allocations", 0)
        eq(s["allocations"] + other, s["frees"] + s["live_allocations_end"],
           "%s: allocations made (%d + %d other) = freed + live at the end" % (where, s["allocations"], other))
        check(s["max_live_allocations"] >= s["live_allocations_end"], "%s: at most live >= live at the end" % where)
        pk = d.get("peak")
        if not pk:
            continue
        live = pk["live_bytes"]
        for key, label in (("by_category", "categories"), ("by_phase", "phases"), ("by_api", "APIs")):
            rows = pk.get(key)
            if rows is None:
                continue
            eq(sum(r["bytes"] for r in rows), live, "%s: the peak's %s share out what was live" % (where, label))
            eq(sum(r.get("count", 0) for r in rows), pk["live_allocations"],
               "%s: the peak's %s count every live allocation" % (where, label))
            if live:
                check(near(sum(r["share"] for r in rows), 1.0) or abs(sum(r["share"] for r in rows) - 1) < 0.01,
                      "%s: the %s' shares sum to 1" % (where, label))
        tree = pk.get("by_layer")
        if tree:
            eq(sum(n["bytes"] for n in tree), live, "%s: the layer tree's roots share out what was live" % where)
            for path, n in walk(tree):
                kids = n.get("children") or []
                if kids and "bytes" in n:
                    check(sum(k["bytes"] for k in kids) <= n["bytes"],
                          "%s: layer %s%s: children within their parent" % (where, path, n.get("name")))
        dt = pk.get("device_total")
        fw = live - pk.get("other", 0)
        if dt is not None:
            check(dt >= live, "%s: the device total at the peak (%d) holds what was live (%d)" % (where, dt, live))
            if pk.get("reserved") is not None:
                eq(dt, max(pk["reserved"], fw) + pk.get("other", 0),
                   "%s: the device total at the peak = reserved + other" % where)
        outcomes = d.get("oom_outcomes")
        if d.get("oom_count") and check(outcomes is not None, "%s: failures have outcomes" % where):
            eq(sum(outcomes.values()), d["oom_count"], "%s: the failures' outcomes add up to their count" % where)
            past = d.get("ooms_got_past") or {}
            eq(past.get("count", 0), outcomes.get("caught", 0) + outcomes.get("retried", 0),
               "%s: got past inside a library = caught + retried" % where)
            listed = d.get("ooms") or []
            check(all(o["fatal"] == (o["outcome"] == "fatal") for o in listed),
                  "%s: a failure is fatal exactly when its outcome is" % where)
            if outcomes.get("fatal") and listed:
                eq(listed[0]["outcome"], "fatal", "%s: the fatal failure comes first" % where)
        for i, o in enumerate(d.get("ooms") or []):
            if o.get("device_total") is not None and o.get("reserved") is not None:
                eq(o["device_total"], max(o["reserved"], o["allocated"]) + o.get("other", 0),
                   "%s: failure %d: device total = reserved + other" % (where, i + 1))


def device_block(text, d):
    """The text's part for one device: from its heading to the next."""
    head = re.compile(r"^GPU %s of process %s\b" % (re.escape(str(d.get("device"))), re.escape(str(d.get("pid")))),
                      re.M)
    m = head.search(text)
    if not m:
        return None
    nxt = re.compile(r"^(GPU \S+ of process|Trace \d+:|Ranks:)", re.M).search(text, m.end())
    return text[m.start():nxt.start() if nxt else len(text)]


def check_text(name, doc, text):
    """The text says the JSON's numbers."""
    for d in doc["devices"]:
        where = "%s: GPU %s of process %s" % (name, d.get("device"), d.get("pid"))
        part = device_block(text, d)
        if not check(part is not None, "%s: the text has a part for it" % where):
            continue
        s = d["summary"]
        for label, amount in (("allocated", s.get("allocated")), ("reserved", s.get("reserved"))):
            if not amount or not amount.get("known"):
                continue
            row = [l for l in part.splitlines() if re.match(r"\s+%s\b" % label, l)]
            if check(row, "%s: a row '%s'" % (where, label)):
                check(fmt(amount["end"]) in row[0] and fmt(amount["peak"]) in row[0],
                      "%s: row %r says %s and %s" % (where, row[0].strip(), fmt(amount["end"]), fmt(amount["peak"])))
        m = re.search(r"allocations: (\d+)(?: by PyTorch, (\d+) other)?; (\d+) freed; (\d+) live at the end "
                      r"\(at most (\d+) at once\)", part)
        if check(m, "%s: the allocations line" % where):
            other = (s.get("other") or {}).get("allocations", 0)
            eq([int(x) for x in (m.group(1), m.group(2) or 0, m.group(3), m.group(4), m.group(5))],
               [s["allocations"], other if m.group(2) else 0, s["frees"], s["live_allocations_end"],
                s["max_live_allocations"]], "%s: the allocations line says the JSON's counts" % where)
        pk = d.get("peak")
        if pk:
            want = "Peak: %s %s at %.3f s" % (fmt(pk["bytes"]), pk["what"], pk["t"])
            st = step_text(pk.get("step"), pk.get("step_when"))
            line = [l for l in part.splitlines() if l.strip().startswith("Peak: ")]
            if check(line, "%s: a Peak line" % where):
                check(line[0].strip().startswith(want + (", " + st if st else "")),
                      "%s: %r starts %r" % (where, line[0].strip(), want + (", " + st if st else "")))
            live = "live then: %s in %d allocations" % (fmt(pk["live_bytes"]), pk["live_allocations"])
            check(live in part, "%s: the text says %r" % (where, live))
        n = d.get("oom_count", 0)
        if n:
            m = re.search(r"Out of memory: (\d+) failed allocation", part)
            if check(m, "%s: an 'Out of memory' line for %d failed allocations" % (where, n)):
                eq(int(m.group(1)), n, "%s: failed allocations, text and JSON" % where)
        lk = d.get("leak") or {}
        if lk.get("verdict") == "leak":
            m = re.search(r"grew at (\d+) of (\d+) steps", part)
            if check(m, "%s: the leak's 'grew at' line" % where):
                eq((int(m.group(1)), int(m.group(2))), (lk["grew"], lk["grew"] + lk["shrank"] + lk["flat"]),
                   "%s: grew at G of S steps, text and JSON" % where)
        for m in re.finditer(r"\bstep (\d+)\b", part):
            check(int(m.group(1)) <= (d.get("steps") or {}).get("count", 0) + 1,
                  "%s: the text's 'step %s' within the program's steps" % (where, m.group(1)))


def check_sections(name, text):
    """No heading without a row under it; no line of only blanks but one."""
    lines = text.splitlines()
    for i, l in enumerate(lines):
        heading = re.match(r"^\s+(by .+?|largest allocations)\s{2,}", l) or re.match(r"^\s+largest allocations$", l)
        if heading:
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if "bytes" in nxt and i + 2 < len(lines):  # a table's header line under the title
                nxt = lines[i + 2]
            check(nxt.strip() != "", "%s: line %d %r: a heading with nothing under it" % (name, i + 1, l.strip()))
        if l.rstrip().endswith(":") and l.strip() and not l.strip().startswith("#"):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            check(nxt.strip() != "", "%s: line %d %r: nothing under it" % (name, i + 1, l.strip()))
    check("\n\n\n" not in text, "%s: no run of blank lines" % name)


def test_all():
    ins = inputs()
    if "--list" in sys.argv:
        for n, p in ins:
            print(n, " ".join(p))
    check(len(ins) >= 30, "every trace the project has: %d inputs" % len(ins))
    for name, paths in ins:
        # the page's data is analyzed with --top 20 (report.c)
        rc, out, err = gp("analyze", "--json", "--top", "20", *paths)
        if not check(rc == 0, "%s: analyze --json: exit %d: %s" % (name, rc, err.strip()[-300:])):
            continue
        doc = json.loads(out)
        rc, text, err = gp("analyze", "--top", "20", *paths)
        if not check(rc == 0, "%s: analyze: exit %d" % (name, rc)):
            continue
        check_steps(name, doc)
        check_oom_segments(name, doc)
        check_counts(name, doc)
        check_text(name, doc, text)
        check_sections(name, text)
        run = page_run(name, paths)
        if run is not None:
            check_moments(name, doc, run)
            got, want = strip_timeline(run), strip_timeline(doc)
            for k in set(got) | set(want):
                if k in ("inputs", "generator"):
                    continue
                check(got.get(k) == want.get(k), "%s: the page's data says the JSON's '%s'" % (name, k))


if __name__ == "__main__":
    sys.exit(checks.main(globals(), "gpuprof-invariants."))
