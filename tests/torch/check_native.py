"""Checks `gpuprof analyze` of a native-mode trace (PyTorch's caching
allocator hooked: every block, every segment) against what PyTorch itself
measured in the same run, on the GPU machine.

  check_native.py GPUPROF TRACE STDOUT --label NAME [--stacks]
                  [--leak SCRIPT:PATTERN [--leak-layer LAYER]] [--oom PLAIN_STDOUT]

STDOUT is the traced program's output; its last GPUPROF_TORCH line
(tests/torch/train_models.py and the like) or GPUPROF_TORCH_EXPECT line
(samples/pytorch) holds max_allocated and max_reserved. The samples that
reset the peak between phases report the maximum over the phases there,
which is the run's peak, so every line is compared the same way.

Check groups, one RESULT line each (RESULT NAME PASS|FAIL GROUP: numbers):
  hook     the trace was recorded in native mode with the allocator hook
           attached (traces[].allocator_hook.attached; with --stacks, its
           stacks too)
  peak     summary.allocated (source "blocks") peaks at max_allocated and
           summary.reserved (source "segments") at max_reserved, exactly
  attrib   at the peak, every live byte has a category (the categories sum
           to live_bytes) and >= 95% of PyTorch's bytes (attributed.bytes,
           which must be the peak's) have a module or a source line
           (attributed.either / attributed.bytes)
  stacks   (--stacks) by_line at the peak is a list with a line in it
  leak     (--leak, for samples/pytorch/outputs_list_leak.py --variant gpu
           traced with --stacks) a leak at exactly the EXPECT line's
           leak_per_step, its survivors' largest layer is LAYER (default
           lm_head, the layer the samples' README names) and their largest
           by_line entry is the line of SCRIPT that contains PATTERN (it
           must match exactly one line)
  oom      (--oom, for samples/pytorch/batch_doubling.py) failed_batch equals
           that of the same script run unprofiled (PLAIN_STDOUT); an OOM
           incident that PyTorch raised names its request, which formatted
           as PyTorch formats sizes is the EXPECT line's tried=, and the text
           report's out-of-memory section says "Tried to allocate" it

Nothing to check (no device, no peak, no leak, no raised OOM) fails.
Exit 0 when every group passed, 1 when one failed, 2 on unusable input
(one line saying why). Standard library only."""
import argparse
import json
import os
import re
import subprocess
import sys

SCHEMA = "gpuprof.analyze/1"
CATEGORIES = ("parameters", "gradients", "optimizer state", "activations", "temporaries",
              "inputs", "other")
MIN_ATTRIBUTED = 0.95
ANALYZE_TIMEOUT = 1200  # seconds: a GPT-2 trace of every block takes a while to read
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LINE = re.compile(r"(.+?:[0-9]+)(?: in .*)?$")
MiB = 1 << 20


class Unusable(Exception):
    """Input the checks cannot run on: exit 2."""


def format_size(n):
    """A size as PyTorch's caching allocator writes it in its messages
    (c10's format_size: its bounds are inclusive, 1024 is "1024 bytes")."""
    if n <= 1024:
        return "%d bytes" % n
    if n <= 1 << 20:
        return "%.2f KiB" % (n / 1024.0)
    if n <= 1 << 30:
        return "%.2f MiB" % (n / 1048576.0)
    return "%.2f GiB" % (n / 1073741824.0)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def expect_line(path):
    """key=value pairs of the last GPUPROF_TORCH or GPUPROF_TORCH_EXPECT line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [l for l in f if l.startswith(("GPUPROF_TORCH ", "GPUPROF_TORCH_EXPECT "))]
    except OSError as e:
        raise Unusable("cannot read %s: %s" % (path, e.strerror or e))
    if not lines:
        raise Unusable("no GPUPROF_TORCH or GPUPROF_TORCH_EXPECT line in %s" % path)
    return dict(w.split("=", 1) for w in lines[-1].split()[1:] if "=" in w)


def int_field(kv, key, where):
    v = kv.get(key)
    if v is None or not re.fullmatch(r"-?[0-9]+", v):
        raise Unusable("%s: %s=%r is not an integer" % (where, key, v))
    return int(v)


def analyze(gp, trace, json_out):
    """`gpuprof analyze [--json] TRACE`'s stdout."""
    argv = [gp, "analyze"] + (["--json"] if json_out else []) + [trace]
    env = dict(os.environ, NO_COLOR="1")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", env=env,
                           timeout=ANALYZE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unusable("cannot run %s: %s" % (" ".join(argv), e))
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise Unusable("%s exit %d: %s" % (" ".join(argv), p.returncode, last[:300]))
    return p.stdout


def report(gp, trace):
    text = analyze(gp, trace, True)
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise Unusable("analyze --json printed no JSON document: %s" % e)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise Unusable("analyze --json: not a %s document" % SCHEMA)
    for key in ("traces", "devices"):
        if not isinstance(doc.get(key), list):
            raise Unusable("analyze --json: %s is not a list" % key)
    return doc


def the_set(obj):
    """A Set's members: in a nested `set` object where there is one, else
    the object itself (the peak and an OOM carry them inline)."""
    s = obj.get("set")
    return s if isinstance(s, dict) else obj


def pick_device(doc):
    """The device whose allocated peak is largest (a one-GPU run has one)."""
    best, best_peak = None, -1
    for d in doc["devices"]:
        if not isinstance(d, dict):
            continue
        peak = member(member(d, "summary"), "allocated").get("peak")
        peak = peak if is_int(peak) else 0
        if peak > best_peak:
            best, best_peak = d, peak
    return best


def member(obj, key):
    """obj[key] where both are objects, else an empty one."""
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, dict) else {}


class Checker:
    def __init__(self, label):
        self.label = label
        self.failed = 0

    def result(self, group, fails, numbers):
        verdict = "FAIL" if fails else "PASS"
        print("RESULT %s %s %s: %s%s" % (self.label, verdict, group, numbers,
                                          "; " + "; ".join(fails) if fails else ""), flush=True)
        if fails:
            self.failed += 1


def check_hook(c, doc, dev, stacks):
    fails = []
    ti = dev.get("trace") if dev is not None else 0
    traces = doc["traces"]
    tr = traces[ti] if is_int(ti) and 0 <= ti < len(traces) else None
    tr = tr if isinstance(tr, dict) else None
    if tr is None:
        c.result("hook", ["no trace in the report"], "traces=%d" % len(traces))
        return
    hook = tr.get("allocator_hook")
    if tr.get("mode") != "native":
        fails.append("mode %r, not native" % tr.get("mode"))
    if not isinstance(hook, dict):
        fails.append("allocator_hook is %r" % (hook,))
        hook = {}
    elif hook.get("attached") is not True:
        fails.append("hook not attached: %s" % hook.get("why"))
    if stacks and hook and hook.get("stacks") is not True:
        fails.append("recorded without stacks")
    c.result("hook", fails, "mode=%s attached=%s stacks=%s allocated_before=%s reserved_before=%s"
             % (tr.get("mode"), hook.get("attached"), hook.get("stacks"),
                hook.get("allocated_before"), hook.get("reserved_before")))


def check_peak(c, dev, exp):
    fails = []
    got = {}
    for what, source in (("allocated", "blocks"), ("reserved", "segments")):
        a = member(member(dev, "summary"), what)
        want = exp["max_" + what]
        peak = a.get("peak")
        got[what] = peak
        if a.get("known") is not True or not is_int(peak):
            fails.append("%s not known" % what)
            continue
        if a.get("source") != source:
            fails.append("%s source %r, not %r" % (what, a.get("source"), source))
        if peak != want:
            fails.append("%s peak %d vs max_%s %d (%+d B)" % (what, peak, what, want, peak - want))
    c.result("peak", fails, "allocated=%s max_allocated=%d reserved=%s max_reserved=%d" % (
        got.get("allocated"), exp["max_allocated"], got.get("reserved"), exp["max_reserved"]))


def check_attribution(c, dev):
    peak = dev.get("peak")
    if not isinstance(peak, dict):
        c.result("attrib", ["no peak: nothing to check"], "peak=null")
        return None
    st = the_set(peak)
    live = st.get("live_bytes")
    if not is_int(live) or live <= 0:
        c.result("attrib", ["no live bytes at the peak: nothing to check"],
                 "live_bytes=%r" % (live,))
        return st
    fails = []
    cats = st.get("by_category")
    total, other = 0, 0
    if not isinstance(cats, list):
        fails.append("by_category is %r" % (cats,))
        cats = []
    for e in cats:
        b = e.get("bytes") if isinstance(e, dict) else None
        name = e.get("category") if isinstance(e, dict) else None
        if name not in CATEGORIES or not is_int(b):
            fails.append("bad category entry %r" % (e,))
            continue
        total += b
        other += b if name == "other" else 0
    if total != live:
        fails.append("categories sum to %d of %d live bytes" % (total, live))
    att = st.get("attributed")
    either = att.get("either") if isinstance(att, dict) else None
    base = att.get("bytes") if isinstance(att, dict) else None
    if not is_int(either) or not is_int(base) or base <= 0:
        fails.append("attributed is %r" % (att,))
        shares = "attributed=?"
    else:
        # of PyTorch's bytes, what the peak counts (the rest is other
        # libraries' memory, which no module or line of the program made)
        if base != peak.get("bytes"):
            fails.append("attributed.bytes %d is not the peak's %r" % (base, peak.get("bytes")))
        share = either / base
        if share < MIN_ATTRIBUTED:
            fails.append("%.2f%% of PyTorch's bytes have a module or a line (< %.0f%%)" % (
                100 * share, 100 * MIN_ATTRIBUTED))
        shares = "either=%.2f%% layer=%s line=%s" % (
            100 * share, pct(att.get("layer"), base), pct(att.get("line"), base))
    c.result("attrib", fails, "live_bytes=%d categorized=%d other=%.1fMiB %s phase=%s step=%s" % (
        live, total, other / MiB, shares, peak.get("phase"), peak.get("step")))
    return st


def pct(v, whole):
    return "%.2f%%" % (100.0 * v / whole) if is_int(v) else "?"


def line_text(e):
    """A by_line entry's "file.py:42", None for the entry of what had no
    Python stack: its line is that text, or a number beside its file (or
    its name, "file.py:42 in forward")."""
    ln = e.get("line")
    if isinstance(ln, str):
        m = LINE.match(ln)
        return m.group(1) if m else None
    if not is_int(ln) or ln <= 0:
        return None
    if isinstance(e.get("file"), str):
        return "%s:%d" % (os.path.basename(e["file"]), ln)
    m = LINE.match(e.get("name") if isinstance(e.get("name"), str) else "")
    return m.group(1) if m else None


def largest(entries):
    """The entry of a by_line array with the most bytes (None if none)."""
    good = [e for e in entries if isinstance(e, dict) and is_int(e.get("bytes"))]
    return max(good, key=lambda e: e["bytes"]) if good else None


def check_stacks(c, st):
    fails = []
    bl = st.get("by_line") if st is not None else None
    lines = []
    if not isinstance(bl, list):
        fails.append("by_line at the peak is %r" % (bl,))
    else:
        lines = [e for e in bl if isinstance(e, dict) and line_text(e)]
        if not lines:
            fails.append("no by_line entry has a line")
    top = largest(lines)
    c.result("stacks", fails, "by_line entries=%s with a line=%d largest=%s" % (
        len(bl) if isinstance(bl, list) else None, len(lines),
        "%s %.1fMiB" % (line_text(top), top["bytes"] / MiB) if top else None))


def layer_path(nodes):
    """Module path of the layer with the most bytes of its own (its bytes
    less its children's) in a by_layer tree."""
    best, best_own = None, -1

    def walk(ns, prefix):
        nonlocal best, best_own
        for n in ns if isinstance(ns, list) else ():
            if not isinstance(n, dict) or not is_int(n.get("bytes")):
                continue
            kids = n.get("children") if isinstance(n.get("children"), list) else []
            path = prefix + [str(n.get("name"))]
            own = n["bytes"] - sum(k.get("bytes", 0) for k in kids
                                   if isinstance(k, dict) and is_int(k.get("bytes")))
            if own > best_own:
                best, best_own = path, own
            walk(kids, path)

    walk(nodes, [])
    return ".".join(best) if best else None


def script_line(script, pattern):
    try:
        with open(script, encoding="utf-8") as f:
            hits = [i for i, l in enumerate(f, 1) if pattern in l]
    except OSError as e:
        raise Unusable("cannot read %s: %s" % (script, e.strerror or e))
    if len(hits) != 1:
        raise Unusable("%r is on %d lines of %s, not one" % (pattern, len(hits), script))
    return hits[0]


def check_leak(c, dev, exp, script, line_no, layer):
    fails = []
    want_rate = exp["leak_per_step"]
    lk = member(dev, "leak")
    verdict, rate = lk.get("verdict"), lk.get("rate_per_step")
    if verdict != "leak":
        fails.append("verdict %r: nothing to check" % verdict)
    elif not is_num(rate) or rate != want_rate:
        fails.append("rate %r B/step vs leak_per_step %d" % (rate, want_rate))
    sv = lk.get("survivors") if isinstance(lk.get("survivors"), dict) else None
    where, top = None, None
    want_line = "%s:%d" % (os.path.basename(script), line_no)
    if verdict == "leak" and sv is None:
        fails.append("no survivors")
    elif sv is not None:
        where = layer_path(sv.get("by_layer"))
        if where is None or where.split(".")[-1] != layer:
            fails.append("largest layer %r, not ...%s" % (where, layer))
        bl = sv.get("by_line")
        top = largest(bl) if isinstance(bl, list) else None
        if top is None:
            fails.append("survivors' by_line is %r" % (bl,))
        elif line_text(top) != want_line:
            fails.append("largest by_line %r, not %s" % (line_text(top), want_line))
        elif isinstance(top.get("file"), str) and \
                os.path.realpath(top["file"]) != os.path.realpath(script):
            fails.append("largest by_line's file %s is not %s" % (top["file"], script))
    c.result("leak", fails, "verdict=%s rate=%s leak_per_step=%d layer=%s line=%s (%s) want=%s" % (
        verdict, rate, want_rate, where, line_text(top) if top else None,
        "%.1fMiB" % (top["bytes"] / MiB) if top and is_int(top.get("bytes")) else "-", want_line))


def oom_section(text):
    """The lines of the text report's out-of-memory sections."""
    out, inside = [], False
    for line in ANSI.sub("", text).splitlines():
        if re.match(r"\s*Out of memory: ", line):
            inside = True
        elif line.startswith("GPU "):  # the next device's (or GPU's) header
            inside = False
        if inside:
            out.append(line)
    return "\n".join(out)


def check_oom(c, gp, trace, dev, exp, plain):
    fails = []
    tried = exp.get("tried", "")
    if exp["failed_batch"] != plain["failed_batch"]:
        fails.append("failed at batch %d traced, %d unprofiled" % (exp["failed_batch"],
                                                                   plain["failed_batch"]))
    ooms = dev.get("ooms") if isinstance(dev.get("ooms"), list) else []
    raised = [o for o in ooms if isinstance(o, dict) and o.get("raised") is True
              and isinstance(o.get("pytorch"), dict) and is_int(o["pytorch"].get("request"))]
    said = None
    if not raised:
        fails.append("no OOM that PyTorch raised: nothing to check")
    else:
        sizes = [format_size(o["pytorch"]["request"]) for o in raised]
        match = [s for s in sizes if s.replace(" ", "") == tried]
        said = match[0] if match else sizes[-1]
        if not match:
            fails.append("PyTorch's request %s, the message said %s" % (" / ".join(sizes), tried))
        elif "Tried to allocate " + said not in oom_section(analyze(gp, trace, False)):
            fails.append("the text report's out-of-memory section lacks "
                         "'Tried to allocate %s'" % said)
    c.result("oom", fails, "failed_batch=%d plain=%d fit_batch=%s tried=%s request=%s raised=%d "
             "oom_count=%s" % (
        exp["failed_batch"], plain["failed_batch"], exp.get("fit_batch"), tried, said, len(raised),
        dev.get("oom_count")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpuprof")
    ap.add_argument("trace")
    ap.add_argument("stdout")
    ap.add_argument("--label", required=True)
    ap.add_argument("--stacks", action="store_true")
    ap.add_argument("--leak", metavar="SCRIPT:PATTERN")
    ap.add_argument("--leak-layer", default="lm_head", metavar="LAYER")
    ap.add_argument("--oom", metavar="PLAIN_STDOUT")
    a = ap.parse_args()
    c = Checker(a.label)
    try:
        kv = expect_line(a.stdout)
        exp = {k: int_field(kv, k, a.stdout) for k in ("max_allocated", "max_reserved")}
        leak = None
        if a.leak:
            script, sep, pattern = a.leak.partition(":")
            if not sep or not script or not pattern:
                raise Unusable("--leak wants SCRIPT:PATTERN, got %r" % a.leak)
            exp["leak_per_step"] = int_field(kv, "leak_per_step", a.stdout)
            leak = (script, script_line(script, pattern))
        plain = None
        if a.oom:
            exp["failed_batch"] = int_field(kv, "failed_batch", a.stdout)
            exp["tried"] = kv.get("tried", "")
            if not exp["tried"]:
                raise Unusable("%s: no tried= on its expect line" % a.stdout)
            exp["fit_batch"] = kv.get("fit_batch")
            plain = {"failed_batch": int_field(expect_line(a.oom), "failed_batch", a.oom)}
        doc = report(a.gpuprof, a.trace)
        dev = pick_device(doc)
        check_hook(c, doc, dev, a.stacks)
        if dev is None:
            c.result("device", ["no device in the report: nothing to check"],
                     "devices=%d" % len(doc["devices"]))
            return 1
        check_peak(c, dev, exp)
        st = check_attribution(c, dev)
        if a.stacks:
            check_stacks(c, st)
        if leak:
            check_leak(c, dev, exp, leak[0], leak[1], a.leak_layer)
        if plain:
            check_oom(c, a.gpuprof, a.trace, dev, exp, plain)
    except Unusable as e:
        print("RESULT %s FAIL unusable input: %s" % (a.label, e), flush=True)
        return 2
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
