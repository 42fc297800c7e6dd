"""Tests of `gpuprof report` (viewer/report/): the page it writes from the
synthetic traces of make_traces.py, checked as text (its Content-Security-
Policy and what it references), against a golden copy of its data, and in
headless Chromium (it renders, says it is ready, draws the charts its data
calls for, shows hostile names as text).

  test_report.py GPUPROF TEST [--update] [--artifacts DIR]
  test_report.py --list      the tests, one a line, with their labels (CTest's)

TEST is one of the functions named test_* below, without the prefix.
--update rewrites golden/ instead of comparing. --artifacts: where the
pages, their DOMs, Chromium's logs and screenshots are kept (default: a
temporary directory, removed). Exit 0 when every check passed, 1 when one
failed, 77 when the test could not run here (no Chromium: the browser
tests; CI installs Debian's chromium, .ci/run). GPUPROF_CHROMIUM names
another browser binary.

The page's contract with its code (viewer/report/assets/js/, bundled), which
the browser tests read from the dumped DOM:
  - <html data-gpuprof-ready="1"> once it has rendered;
  - <pre id="gpuprof-selftest" hidden> holding
      {"charts": [{"id": ..., "kind": K, "series": N}, ...], "errors": [...]}
    where K is one of CHART_KINDS. expected_charts() says which charts a
    page's data calls for and how many series each draws."""
import base64
import hashlib
import html
import html.parser
import itertools
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "analyze"))
import cdp  # noqa: E402
import make_traces  # noqa: E402
from checks import check, eq, labels, list_tests, report  # noqa: E402

GP = None
TMP = None
ARTIFACTS = None
SKIP = 77

CHART_KINDS = ("timeline", "live", "icicle", "stacked", "leak", "oom", "frag", "steps", "outline", "aligned")
# the page of a 1,000,000-event trace (CI-sized; bench/report_budget.py
# measures 10,000,000) may be at most this many bytes
SIZE_BUDGET = 10 * 1000 * 1000
LARGE_EVENTS = 1_000_000
# a small trace's page: the code and libraries (~150 kB) and its data
SMALL_PAGE_MAX = 2 * 1000 * 1000


class Skip(Exception):
    """The test cannot run here: exit 77, saying why."""


# ---- running gpuprof ----

def gp(*args):
    p = subprocess.run([GP] + list(args), cwd=TMP, capture_output=True, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


_traces = {}


def traces(kind, n=None):
    """The traces of make_traces.py's kind (a list), made once per test in
    TMP."""
    key = (kind, n)
    if key not in _traces:
        _traces[key] = make_traces.make(kind, TMP, n)
    return _traces[key]


def trace(kind, n=None):
    """The one trace of a kind."""
    return traces(kind, n)[0]


def make_page(name, inputs, base=(), expect_notes=0):
    """gpuprof report INPUTS [--base B]... -o TMP/name.html: the page's
    path and text; a failed run fails the check and returns (path, None)."""
    out = os.path.join(TMP, name + ".html")
    args = ["report"] + list(inputs)
    for b in base:
        args += ["--base", b]
    rc, stdout, err = gp(*(args + ["-o", out, "--force"]))
    lines = err.splitlines()
    ok = check(rc == 0 and os.path.exists(out), "%s: gpuprof report exit %d, stderr %r" % (name, rc, err[-500:]))
    eq(stdout, "", "%s: nothing on stdout" % name)
    check(lines and lines[-1] == "gpuprof: report written to %s" % out,
          "%s: says where the page is (%r)" % (name, lines[-1:]))
    check(len(lines) == 1 + expect_notes, "%s: %d line(s) on stderr, got %r" % (name, 1 + expect_notes, err))
    if not ok:
        return out, None
    text = open(out, encoding="utf-8").read()
    keep(name + ".html", text)
    return out, text


def keep(name, data):
    """A test artifact: kept under ARTIFACTS when it is set."""
    if not ARTIFACTS:
        return None
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
        f.write(data)
    return path


# ---- reading the page ----

class Markup(html.parser.HTMLParser):
    """Every element (tag, attributes), the text of each <script> and
    <style>, the title, and the visible text (not in script, style, title,
    head, nor under an element with the hidden attribute)."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []   # (tag, {attr: value})
        self.raw = {}        # index of a script/style element -> its text
        self.stack = []      # (tag, hidden)
        self.text = []
        self.svg_text = []   # the visible text of SVG <text> (the icicle's labels)
        self.title = ""
        self.selftest = None
        self._in = None      # the script/style element being read
        self._pre = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag in ("script", "style"):
            self._in = len(self.elements) - 1
            self.raw[self._in] = ""
        if tag == "pre" and a.get("id") == "gpuprof-selftest":
            self._pre = ""
        if tag not in self.VOID:
            hidden = "hidden" in a or tag in ("head", "title", "script", "style") or \
                     bool(self.stack and self.stack[-1][1])
            self.stack.append((tag, hidden))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._in = None
        if tag == "pre" and self._pre is not None:
            self.selftest, self._pre = self._pre, None
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self._in is not None:
            self.raw[self._in] += data
            return
        if self._pre is not None:
            self._pre += data
        if self.stack and self.stack[-1][0] == "title":
            self.title += data
        if not self.stack or not self.stack[-1][1]:
            self.text.append(data)
            if self.stack and self.stack[-1][0] == "text":
                self.svg_text.append(data)

    def tags(self, tag):
        return [(i, a) for i, (t, a) in enumerate(self.elements) if t == tag]


def parse(text):
    m = Markup()
    m.feed(text)
    m.close()
    return m


def sha256_b64(text):
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def page_data(text):
    """The data of a page (the gpuprof-data element's JSON), or None."""
    m = parse(text)
    els = [i for i, a in m.tags("script") if a.get("id") == "gpuprof-data"]
    if len(els) != 1:
        return None
    return json.loads(m.raw[els[0]])


URL_ATTRS = ("src", "href", "action", "formaction", "srcset", "poster", "data", "background", "cite",
             "longdesc", "manifest", "ping", "xlink:href")


def check_page(name, text):
    """What every page must be: one CSP that allows only its own script and
    style (by their hashes), before them; nothing it could fetch; its data
    inert inside its element."""
    m = parse(text)
    csp = [a for _, a in m.tags("meta") if (a.get("http-equiv") or "").lower() == "content-security-policy"]
    if not eq(len(csp), 1, "%s: one Content-Security-Policy meta" % name):
        return None
    first_meta = next(i for i, (t, a) in enumerate(m.elements)
                      if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy")
    first_active = min([i for i, (t, _) in enumerate(m.elements) if t in ("script", "style", "link")] or [1 << 30])
    check(first_meta < first_active, "%s: the CSP comes before every script and style (else it does not "
          "cover them)" % name)
    directives = {}
    for d in csp[0].get("content", "").split(";"):
        words = d.split()
        if words:
            check(words[0].lower() not in directives, "%s: CSP directive %s once" % (name, words[0]))
            directives[words[0].lower()] = words[1:]
    eq(directives.get("default-src"), ["'none'"], "%s: CSP default-src 'none'" % name)
    scripts = m.tags("script")
    styles = m.tags("style")
    data_els = [i for i, a in scripts if a.get("type") == "application/json" and a.get("id") == "gpuprof-data"]
    code_els = [i for i, a in scripts if i not in data_els]
    eq(len(data_els), 1, "%s: one gpuprof-data element" % name)
    eq(len(code_els), 1, "%s: one script of code" % name)
    eq(len(styles), 1, "%s: one <style>" % name)
    eq(m.tags("link"), [], "%s: no <link>" % name)
    for i, a in scripts:
        check("src" not in a, "%s: no script with src (%r)" % (name, a))
    if code_els:
        code = m.raw[code_els[0]]
        eq(directives.get("script-src"), ["'sha256-%s'" % sha256_b64(code)],
           "%s: CSP script-src is the hash of the script, nothing else" % name)
    if styles:
        css = m.raw[styles[0][0]]
        eq(directives.get("style-src"), ["'sha256-%s'" % sha256_b64(css)],
           "%s: CSP style-src is the hash of the style, nothing else" % name)
        urls = re.findall(r"url\(\s*(['\"]?)(.*?)\1\s*\)", css, re.I)
        check(all(u.startswith("data:") for _, u in urls),
              "%s: CSS url() only of data: (%r)" % (name, [u[:60] for _, u in urls if not u.startswith("data:")]))
        check(not re.search(r"@import", css, re.I), "%s: no @import in the CSS" % name)
        check(not re.search(r"https?:", css, re.I), "%s: no http(s): in the CSS" % name)
    for src in directives.values():
        for w in src:
            check(not re.match(r"'?(https?:|\*|'unsafe-)", w), "%s: CSP allows no host nor unsafe source (%s)"
                  % (name, w))
    # markup: no attribute that fetches, nor any http(s) reference in one
    for tag, a in m.elements:
        for k, v in a.items():
            v = v or ""
            if k in URL_ATTRS and not (v.startswith("#") or v.startswith("data:")):
                check(False, "%s: <%s %s=%r>: the page fetches nothing" % (name, tag, k, v[:80]))
            if k == "style":
                check(not re.search(r"url\(|@import", v, re.I), "%s: no url() in a style attribute" % name)
    # markup outside the elements' text (the tags themselves)
    bare = text
    for i in sorted(m.raw, reverse=True):
        bare = bare.replace(m.raw[i], "")
    check(not re.search(r"https?://", bare, re.I), "%s: no http(s):// in the markup" % name)
    # the data: strict JSON, inert inside its element
    data = None
    if data_els:
        raw = m.raw[data_els[0]]
        for ch, what in (("<", "<"), (">", ">"), ("&", "&"), ("\u2028", "U+2028"), ("\u2029", "U+2029")):
            check(ch not in raw, "%s: no raw %s in the data (written as \\u escapes)" % (name, what))
        try:
            data = json.loads(raw, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except ValueError as e:
            check(False, "%s: the data is strict JSON: %s" % (name, e))
    if data is not None:
        eq(data.get("schema"), "gpuprof.report/1", "%s: data schema" % name)
        eq((data.get("run") or {}).get("schema"), "gpuprof.analyze/1", "%s: the run's schema" % name)
    n = len(text.encode("utf-8"))
    check(10_000 < n <= SMALL_PAGE_MAX, "%s: size %d bytes, expected 10 kB to %d" % (name, n, SMALL_PAGE_MAX))
    return data


# ---- what the page should draw ----

def expected_charts(doc, two_runs=None):
    """{kind: [series of each chart of that kind, or None where any number
    >= 1 will do]} that a run's document (the data's run, or its base)
    calls for, per device:
      timeline  with a timeline: each amount (allocated, reserved, other)
                its most, and its least where given (a band), and the
                device total's most
      icicle    with a layer tree at the peak (any number of nodes drawn)
      live      where the device has moments: one column each, the
                breakdown of the one with the most (its categories: a
                stacked chart)
      stacked   at the peak: its categories (in cuda mode, its APIs), and
                its phases where it has them; for each failed allocation,
                the categories (APIs) of what was live
      leak      where the verdict is "leak", with two steps or more: live
                at each step, the fit where it has a rate, and the device
                total where it differs from live
      oom       each failed allocation (the device's parts and the request)
      frag      where fragmentation is known and the timeline has reserved
                and allocated: the two over time
      steps     without a timeline (a summary), two steps or more: live,
                and reserved and the device total where known (which
                stands for the frag chart there)
      outline   a flight recorder's trace (an outline), two steps or more:
                each step's peak and live at its mark, and the steps of
                the window of full events where it begins inside them
    two_runs: compare's document, for the run of a page with --base: one
    steps chart per pair of processes, both runs' live (2 series)."""
    out = {}
    add = lambda kind, n: out.setdefault(kind, []).append(n)
    num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    for d in (doc or {}).get("devices") or []:
        tl = d.get("timeline")
        pts = [x for x in ((d.get("steps") or {}).get("series") or []) if num(x.get("step"))]
        if tl:
            add("timeline", sum((1 + (tl[k].get("min") is not None)) for k in ("allocated", "reserved", "other")
                                if tl.get(k)) + (1 if tl.get("device") else 0))
        elif len(pts) >= 2:
            add("steps", 1 + any(num(x.get("reserved")) for x in pts) + any(num(x.get("total")) for x in pts))
        # the moments' columns, and the first one shown (the most live)
        # by category (in cuda mode none)
        moments = [m for m in d.get("moments") or [] if num(m.get("from")) and num(m.get("live_bytes"))]
        if moments:
            add("live", len(moments))
            first = max(moments, key=lambda m: m.get("bytes") or 0)
            if first.get("by_category"):
                add("stacked", len(first["by_category"]))
        peak = d.get("peak") or {}
        if peak.get("by_layer"):
            add("icicle", None)
        # a card for each failure the program did not get past inside a
        # library (a summary without outcomes: each)
        cards = [o for o in d.get("ooms") or [] if o.get("outcome") in (None, "fatal", "later_steps")]
        for where in [peak] + [o for o in cards if o.get("detailed") is not False]:
            if where.get("by_category") or where.get("by_api"):
                add("stacked", len(where.get("by_category") or where.get("by_api")))
        if peak.get("by_phase"):
            add("stacked", len(peak["by_phase"]))
        ol = d.get("outline")
        if ol and len([x for x in pts if num(x.get("peak"))]) >= 2:
            add("outline", 2 + any(num(ol.get("window_t")) and num(x.get("t")) and x["t"] >= ol["window_t"]
                                   for x in pts))
        leak = d.get("leak") or {}
        live = [x for x in pts if num(x.get("live"))]
        if leak.get("verdict") == "leak" and len(live) >= 2:
            fit = num(leak.get("rate_per_step")) and any(x["step"] >= (leak.get("since_step") or 0) for x in live)
            add("leak", 1 + bool(fit) + any(num(x.get("total")) and x["total"] != x["live"] for x in live))
        for o in cards:
            add("oom", None)
        frag = (d.get("summary") or {}).get("cache") or (d.get("summary") or {}).get("fragmentation") or {}
        if frag.get("known") is not False and (frag.get("worst") or frag.get("at_peak")) and \
                tl and tl.get("reserved") and tl.get("allocated"):
            add("frag", 2)
    for _ in (two_runs or {}).get("pairs") or []:
        # both runs laid over each other by step (where both have a
        # timeline and steps), and live at each step mark
        add("aligned", 2)
        add("steps", 2)
    return out


def series_match(got, want):
    """got (series counts drawn) fits want (expected_charts' list)."""
    if len(got) != len(want):
        return False
    rest = sorted(got)
    for s in (s for s in want if s is not None):
        if s not in rest:
            return False
        rest.remove(s)
    return all(s >= 1 for s in rest)


def check_selftest(name, selftest, data, kinds):
    """selftest: the page's own account; kinds: the chart kinds this page
    must have (a check of the data too: the trace calls for them). With
    --base the page draws the run's charts, the steps of both runs (2
    series), and may draw the base's own charts too."""
    two = bool(data.get("base"))
    want = expected_charts(data.get("run"), data.get("compare"))
    other = expected_charts(data.get("base")) if two else {}
    eq(sorted(want), sorted(kinds), "%s: the charts its data calls for (the trace's story)" % name)
    if not check(isinstance(selftest, dict), "%s: the self-test is a JSON object (%r)" % (name, selftest)):
        return
    eq(selftest.get("errors"), [], "%s: the self-test's errors" % name)
    charts = selftest.get("charts")
    if not check(isinstance(charts, list), "%s: the self-test lists its charts" % name):
        return
    got = {}
    for c in charts:
        if not check(isinstance(c, dict) and c.get("kind") in CHART_KINDS and isinstance(c.get("series"), int)
                     and c.get("id"), "%s: a chart is {id, kind (one of %s), series}: %r"
                     % (name, "|".join(CHART_KINDS), c)):
            continue
        got.setdefault(c["kind"], []).append(c["series"])
    ids = [c.get("id") for c in charts if isinstance(c, dict)]
    eq(len(ids), len(set(ids)), "%s: chart ids are unique" % name)
    check(set(got) <= set(want) | set(other) and set(want) <= set(got),
          "%s: chart kinds drawn %s, expected %s%s (selftest %r)"
          % (name, sorted(got), sorted(want), " (and the base's %s)" % sorted(other) if two else "", charts))
    for kind in sorted(set(want) | set(other)):
        g, w = got.get(kind, []), want.get(kind, [])
        check(series_match(g, w) or (two and series_match(g, w + other.get(kind, []))),
              "%s: %s charts' series %r, expected %r%s (None: any)"
              % (name, kind, sorted(g), w, " or with the base's %r" % (w + other.get(kind, [])) if two else ""))


# ---- the browser ----

def chromium():
    for b in (os.environ.get("GPUPROF_CHROMIUM"), "chromium", "chromium-browser"):
        if b and shutil.which(b):
            return shutil.which(b)
    raise Skip("no chromium (nor chromium-browser) on PATH: the page is not loaded in a browser here "
               "(CI installs Debian's chromium: .ci/run)")


FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=5000"]
# what the page says in the browser's log: console messages (every level:
# Chromium logs them all as INFO:CONSOLE), uncaught exceptions, CSP
# violations; not the browser's own chatter (D-Bus and the like)
PAGE_LOG = re.compile(r":CONSOLE[:(]|Uncaught|Content.Security.Policy|Refused to", re.I)


def browse(page, what, timeout=120):
    """Runs Chromium on the page (file://); what: ["--dump-dom"] or
    ["--screenshot=PATH", "--window-size=..."]. (stdout, page log lines,
    wall seconds)."""
    profile = tempfile.mkdtemp(prefix="chromium.", dir=TMP)
    t0 = time.monotonic()
    p = subprocess.run([chromium()] + FLAGS + ["--user-data-dir=" + profile] + what + ["file://" + page],
                       capture_output=True, timeout=timeout)
    wall = time.monotonic() - t0
    log = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 0, "chromium %s: exit %d: %s" % (" ".join(what), p.returncode, log[-800:]))
    shutil.rmtree(profile, ignore_errors=True)
    return p.stdout.decode("utf-8", "replace"), [ln for ln in log.splitlines() if PAGE_LOG.search(ln)], wall, log


def load(name, page, shot=True, timeout=120):
    """The page in headless Chromium: its DOM parsed, the self-test, the
    ready flag; no console message nor CSP violation; the screenshot not
    blank, kept as an artifact. Returns (Markup of the DOM, selftest)."""
    # the first screen's size (the answer's place is measured at it)
    dom, msgs, _, log = browse(page, ["--dump-dom", "--window-size=1400,900"], timeout)
    keep(name + ".dom.html", dom)
    keep(name + ".chromium.log", log)
    eq(msgs, [], "%s: no console message, exception or CSP violation in the browser's log" % name)
    m = parse(dom)
    ready = [a for _, a in m.tags("html") if a.get("data-gpuprof-ready") == "1"]
    check(ready, "%s: the page set its ready flag (<html data-gpuprof-ready=\"1\">)" % name)
    selftest = None
    if check(m.selftest is not None, "%s: a <pre id=\"gpuprof-selftest\">" % name):
        try:
            selftest = json.loads(m.selftest)
        except ValueError as e:
            check(False, "%s: the self-test is JSON (%s): %r" % (name, e, m.selftest[:300]))
    check_layout(name, selftest, timelines=False)
    if shot:
        png = os.path.join(ARTIFACTS or TMP, name + ".png")
        os.makedirs(os.path.dirname(png), exist_ok=True)
        if os.path.exists(png):
            os.unlink(png)
        _, msgs, _, _ = browse(page, ["--screenshot=" + png, "--window-size=1400,2600"], timeout)
        eq(msgs, [], "%s: nothing in the log while taking the screenshot" % name)
        if check(os.path.exists(png), "%s: a screenshot" % name):
            colors, vivid = png_colors(open(png, "rb").read())
            check(colors > 16 and vivid > 2000,
                  "%s: the screenshot is not blank: %d distinct colors, %d pixels of a saturated color "
                  "(want > 16 and > 2000: charts) (%s)" % (name, colors, vivid, png))
    return m, selftest


def png_colors(blob):
    """(distinct colors, pixels of a saturated color: max-min of the
    channels > 48) of a PNG, 8-bit RGB or RGBA, not interlaced; decoded
    with zlib and the PNG filters (every row; colors of every 2nd)."""
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    pos, idat, hdr = 8, [], None
    while pos + 8 <= len(blob):
        n, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("PNG not 8-bit RGB(A) non-interlaced: %r" % (hdr,))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytes(stride)
    mask = int.from_bytes(b"\x00\xff" * ((stride + 1) // 2), "big") >> (8 * (stride % 2))
    colors, vivid = set(), 0
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        if f == 0:
            cur = line
        elif f == 2:  # Up: bytewise sums, the even and odd bytes apart so no carry crosses
            a, b = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            nm = ~mask & ((1 << (8 * stride)) - 1)
            cur = ((((a & mask) + (b & mask)) & mask) | (((a & nm) + (b & nm)) & nm)).to_bytes(stride, "big")
        elif f == 1:  # Sub: each channel a running sum
            c = bytearray(stride)
            for k in range(bpp):
                c[k::bpp] = bytes(v & 255 for v in itertools.accumulate(line[k::bpp]))
            cur = bytes(c)
        else:  # Average, Paeth
            c = bytearray(stride)
            for i in range(stride):
                left = c[i - bpp] if i >= bpp else 0
                up = prev[i]
                if f == 3:
                    c[i] = (line[i] + ((left + up) >> 1)) & 255
                else:
                    ul = prev[i - bpp] if i >= bpp else 0
                    p = left + up - ul
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                    c[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 255
            cur = bytes(c)
        prev = cur
        if y % 2 == 0:
            for i in range(0, stride, bpp):
                px = cur[i:i + 3]
                colors.add(px)
                if max(px) - min(px) > 48:
                    vivid += 2
    return len(colors), vivid


# ---- the tests ----

PAGES = {
    # trace kind: (charts its page draws, extra lines on stderr)
    "train": (["timeline", "live", "icicle", "stacked", "leak", "frag"], 0),
    "oom": (["timeline", "live", "icicle", "stacked", "oom", "frag"], 1),  # 1: "was cut short"
    "flight": (["outline", "timeline", "live", "icicle", "stacked", "leak", "frag"], 0),
    "cuda": (["timeline", "live", "icicle", "stacked"], 0),
    "trials": (["timeline", "live", "icicle", "stacked", "oom", "frag"], 0),
    "hostile": (["timeline", "live", "icicle", "stacked", "oom", "frag"], 0),  # two processes
}


def test_page():
    """Each page, as text: CSP, no reference to fetch, size, inert data."""
    for kind, (_, notes) in PAGES.items():
        _, text = make_page(kind, traces(kind), expect_notes=notes)
        if text is not None:
            check_page(kind, text)
    # from an analyze --json summary: the same page, without a timeline
    rc, out, err = gp("analyze", "--json", trace("train"))
    eq(rc, 0, "analyze --json")
    open(os.path.join(TMP, "train.summary.json"), "w").write(out)
    _, text = make_page("summary", [os.path.join(TMP, "train.summary.json")])
    if text is not None:
        data = check_page("summary", text)
        check(data and "timeline" not in data["run"]["devices"][0], "summary: no timeline in the data")
    # the same input, the same page
    _, again = make_page("train.again", [trace("train")])
    _, first = make_page("train", [trace("train")])
    check(first is not None and again == first, "the same trace gives the same page")


def normalize(data):
    """The data with what varies from one build or machine to another made
    constant: input paths (to their base names) and gpuprof's version."""
    data = json.loads(json.dumps(data))
    data["generator"] = re.sub(r"^gpuprof .*", "gpuprof X", data.get("generator") or "")
    for k in ("inputs", "base_inputs"):
        if data.get(k):
            data[k] = [os.path.basename(p) for p in data[k]]
    for side in ("run", "base", "compare"):
        doc = data.get(side)
        if not doc:
            continue
        if "gpuprof_version" in doc:
            doc["gpuprof_version"] = "X"
        for t in doc.get("traces") or []:
            if t.get("path"):
                t["path"] = os.path.basename(t["path"])
    return data


def pretty(doc, indent=0):
    """JSON with one member a line, arrays of numbers and strings on one
    line (a timeline is thousands of numbers): diffs that read."""
    pad = " " * indent
    if isinstance(doc, dict):
        if not doc:
            return "{}"
        items = ['%s "%s": %s' % (pad, k, pretty(v, indent + 1)) for k, v in doc.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(doc, list) and any(isinstance(v, (dict, list)) for v in doc):
        return "[\n" + ",\n".join(pad + " " + pretty(v, indent + 1) for v in doc) + "\n" + pad + "]"
    return json.dumps(doc, ensure_ascii=False)


def test_golden():
    """The data of train's page against golden/train.data.json, the paths
    and the version normalized; --update rewrites it."""
    _, text = make_page("train", [trace("train")])
    if text is None:
        return
    data = page_data(text)
    if not check(data is not None, "train: the page's data"):
        return
    got = pretty(normalize(data)) + "\n"
    path = os.path.join(HERE, "golden", "train.data.json")
    if "--update" in sys.argv:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w", encoding="utf-8").write(got)
        print("wrote %s" % path)
        return
    want = open(path, encoding="utf-8").read() if os.path.exists(path) else None
    if not check(got == want, "train's data differs from golden/train.data.json (regenerate: "
                 "test_report.py GPUPROF golden --update)"):
        import difflib
        sys.stderr.writelines(list(difflib.unified_diff((want or "").splitlines(True), got.splitlines(True),
                                                        "golden", "now", n=2))[:80])
        keep("train.data.json", got)
    # and what the golden file holds makes sense on its own
    run = data["run"]["devices"][0]
    eq(run["leak"]["verdict"], "leak", "train: a leak")
    tl = run.get("timeline") or {}
    check(tl.get("n", 0) >= 100 and len(tl.get("phase") or []) == tl.get("n"), "train: a timeline of buckets")
    check({"forward", "backward", "optimizer.step", "zero_grad"} <= set(tl.get("phases") or []),
          "train: the timeline's phases (%r)" % tl.get("phases"))
    amax = ((tl.get("allocated") or {}).get("max")) or []
    eq(max(v for v in amax if v is not None) if amax else None, run["summary"]["allocated"]["peak"],
       "train: the timeline's highest allocated is the peak")


def check_answer(name, selftest, first, more=()):
    """The page's first screen (1400x900) answers: the answer block opens
    the page, its first verdict begins with first and lies within the
    first 900 px; more: texts of later verdicts, in order."""
    a = (selftest or {}).get("answer")
    if not check(a, "%s: the self-test says where the answer is" % name):
        return None
    # headless Chromium's window of 1400x900 leaves a viewport 1400 wide
    # (less high): the place is in page pixels, from the page's top
    eq(a.get("width"), 1400, "%s: measured on a page 1400 px wide" % name)
    v = a.get("verdicts") or []
    check(v and v[0]["text"].startswith(first), "%s: the first verdict is %r (%r)" % (name, first, v[:1]))
    check(v and v[0]["bottom"] <= 900, "%s: the first verdict within the first 900 px (%r)" % (name, v[:1]))
    check(a.get("top", 1e9) < 120, "%s: the answer opens the page (top %r)" % (name, a.get("top")))
    texts = [x["text"] for x in v[1:]]
    for want in more:
        hit = next((i for i, t in enumerate(texts) if want in t), None)
        check(hit is not None, "%s: a verdict says %r (%r)" % (name, want, texts))
        texts = texts[hit + 1:] if hit is not None else texts
    return a


def check_layout(name, selftest, timelines=True):
    """The page at 1400 px: every table fits (no column out of sight), each
    timeline opens on the whole run, the labels of its marks never overlap.
    timelines: the page has some (not a summary's)."""
    if not selftest:
        return
    eq(selftest.get("wide_tables"), [], "%s: every table fits a page 1400 px wide" % name)
    views = selftest.get("views") or []
    check(views or not timelines, "%s: the self-test says what each timeline opens on" % name)
    for v in views:
        lo, hi = v["shown"]
        whole = lo is not None and lo <= v["run"][0] + 1e-9 and hi >= v["run"][1] - 1e-9
        # or on the steps, saying what it leaves out, the peak inside
        said = v.get("left_out") and lo is not None and abs(lo - v["left_out"]["from"]) < 1e-9 and \
            hi >= v["run"][1] - 1e-9 and (v.get("peak_t") is None or lo <= v["peak_t"] <= hi)
        check(whole or said, "%s: %s opens on the whole run, or says what it leaves out and shows the peak (%r)"
              % (name, v["id"], v))
    by_row = {}
    for lab in selftest.get("labels") or []:
        if lab.get("row"):
            for other in by_row.get((lab["chart"], lab["row"]), []):
                check(lab["x0"] >= other["x1"] or other["x0"] >= lab["x1"],
                      "%s: labels %r and %r overlap" % (name, lab["text"], other["text"]))
            by_row.setdefault((lab["chart"], lab["row"]), []).append(lab)


def browser_test(kind):
    chromium()
    _, text = make_page(kind, traces(kind), expect_notes=PAGES[kind][1])
    if text is None:
        return None, None
    m, selftest = load(kind, os.path.join(TMP, kind + ".html"))
    check_selftest(kind, selftest, page_data(text), PAGES[kind][0])
    check_layout(kind, selftest)
    return m, selftest


def live_is_peak(name, what, live, inputs):
    """A breakdown the page shows (a self-test `live` entry) holds the
    peak, to the byte: its bytes, what was alive, its categories."""
    rc, out, _ = gp("analyze", "--json", *inputs)
    peak = json.loads(out)["devices"][0]["peak"] if rc == 0 else {}
    eq([live["bytes"], live["live_bytes"]], [peak.get("bytes"), peak.get("live_bytes")],
       "%s: %s holds the peak, and what was alive then" % (name, what))
    eq(live["by_category"], [[c["category"], c["bytes"]] for c in peak.get("by_category") or []],
       "%s: %s: the peak's categories" % (name, what))


def live_is_at(name, what, live, inputs):
    """A breakdown the page shows is what analyze --at gives at its
    moment: bytes, categories, layers, source lines."""
    rc, out, _ = gp("analyze", "--json", "--at", "%.9f" % live["t"], *inputs)
    at = json.loads(out)["devices"][0]["at"] if rc == 0 else {}
    eq([live["bytes"], live["live_bytes"]], [at.get("bytes"), at.get("live_bytes")],
       "%s: %s: the bytes analyze --at gives then" % (name, what))
    eq(live["by_category"], [[c["category"], c["bytes"]] for c in at.get("by_category") or []],
       "%s: %s: analyze --at's categories" % (name, what))
    eq(live["by_layer"], [[x["name"], x["bytes"]] for x in at.get("by_layer") or []],
       "%s: %s: analyze --at's layers" % (name, what))
    eq(live["by_line"], [[x["name"], x["bytes"]] for x in at["by_line"]] if at.get("by_line") is not None else None,
       "%s: %s: analyze --at's source lines" % (name, what))


def check_live(name, selftest, inputs):
    """The breakdown the page shows first under Live memory per allocation
    (the moment that holds the most: the peak's) is analyze's: the peak,
    to the byte, and what analyze --at gives at that moment."""
    live = ((selftest or {}).get("live") or {}).get("dev0")
    if not check(live, "%s: the page shows a breakdown of live memory (self-test live.dev0)" % name):
        return
    live_is_peak(name, "the breakdown shown first", live, inputs)
    live_is_at(name, "the breakdown shown first", live, inputs)


def check_clicks(name, inputs):
    """Clicked as a user clicks (Chromium driven over its DevTools): the
    column that holds the peak shows the peak, to the byte, and another
    column shows what analyze --at says at its moment; the pointer over a
    band shows what it is."""
    page = os.path.join(TMP, name + ".html")
    data = page_data(open(page, encoding="utf-8").read())
    moments = sorted(data["run"]["devices"][0].get("moments") or [], key=lambda m: m["first_event"])
    if not check(len(moments) > 3, "%s: moments to click" % name):
        return
    peak = max(range(len(moments)), key=lambda i: (moments[i]["bytes"], -i))
    other = next(i for i in (len(moments) // 3, len(moments) // 2, 1) if i != peak)
    with cdp.Page(chromium(), TMP) as p:
        p.open("file://" + page, "!!document.documentElement && document.documentElement.dataset.gpuprofReady === '1'")
        for i in (other, peak):
            xy = p.evaluate("""(() => {
                const g = document.querySelector('svg[data-chart="dev0-live"]');
                g.scrollIntoView({ block: "center" });
                const r = g.querySelector('rect[data-column="%d"]').getBoundingClientRect();
                return [r.left + r.width / 2, r.top + r.height / 2];
            })()""" % i)
            p.click(*xy)
            live = json.loads(p.evaluate("document.getElementById('gpuprof-selftest').textContent"))["live"]["dev0"]
            eq(live["t"], moments[i]["t"], "%s: a click on column %d shows its moment" % (name, i))
            live_is_at(name, "column %d clicked" % i, live, inputs)
        # the last click, the peak's column: the peak, to the byte
        live_is_peak(name, "the peak's column clicked", live, inputs)
        # the pointer over the tallest band of the peak's column: the tip
        # names that allocation (the band found from the pointer's height)
        bands = data["run"]["devices"][0].get("bands") or []
        ids = sorted(moments[peak]["largest"], key=lambda k: (bands[k]["t"], k))
        top = max(max([m["live_bytes"], sum(bands[k]["bytes"] for k in m["largest"])]) for m in moments)
        if check(len(ids) > 1, "%s: the peak's column has bands" % name):
            # the tallest but the bottom one: the tip must tell them apart
            k = max(ids[1:], key=lambda k: bands[k]["bytes"])
            mid = sum(bands[j]["bytes"] for j in ids[:ids.index(k)]) + bands[k]["bytes"] / 2
            x, y, height = p.evaluate("""(() => {
                const r = document.querySelector('svg[data-chart="dev0-live"] rect[data-column="%d"]').getBoundingClientRect();
                return [r.left + r.width / 2, r.top, r.height];
            })()""" % peak)
            p.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y + (1 - mid / top) * height)
            tip = p.evaluate("(() => { const t = document.querySelector('[role=tooltip]');"
                             " return t && t.style.display === 'block' ? t.innerText : null; })()")
            b = bands[k]
            # its size as the text report writes it (the page writes it the same: test_formatting)
            printer = os.environ.get("GPUPROF_PRINT_BYTES")
            size = subprocess.run([printer, str(b["bytes"])], capture_output=True, text=True).stdout.strip() if printer else ""
            check(tip and tip.startswith(size) and "made at %.3f s" % b["t"] in tip and "layer: " + (b["layer"] or "\u2013") in tip
                  and "line: " + (b["line"] or "\u2013") in tip and ("never freed" in tip) == (b["freed_t"] is None),
                  "%s: the tip over the peak's tallest band names it (%r; band %r)" % (name, tip, b))
        eq([ln for ln in p.log if PAGE_LOG.search(ln)], [], "%s: nothing in the browser's log while clicking" % name)


@labels("browser")
def test_browser_train():
    """A training loop: timeline, layers, categories, leak, fragmentation,
    steps; the leak's rate, since when and what stays, on the first screen."""
    m, selftest = browser_test("train")
    check_live("train", selftest, traces("train"))
    check_clicks("train", traces("train"))
    a = check_answer("train", selftest, "Leak: +1.00 MiB per step since step 4")
    check(a and a["bottom"] <= 900, "train: the whole answer within the first screen (%r)" % (a and a["bottom"]))
    dom = " ".join(m.text) if m else ""
    check("what stays by layer: <Net>.blocks.1.mlp" in dom, "train: the leak's layer in the answer")


@labels("browser")
def test_browser_flight():
    """A flight recorder's trace: the whole run's outline first, the steps
    of the window of full events drawn over it."""
    m, selftest = browser_test("flight")
    charts = {c.get("id"): c for c in (selftest or {}).get("charts") or []}
    eq((charts.get("dev0-outline") or {}).get("series"), 3, "flight: the outline's chart marks the window")


@labels("browser")
def test_browser_oom():
    """A training loop that runs out of memory: the fatal request, what held
    the memory then and the advice on the first screen."""
    m, selftest = browser_test("oom")
    check_live("oom", selftest, traces("oom"))
    check_clicks("oom", traces("oom"))
    a = check_answer("oom", selftest, "Out of memory: 1.50 GiB could not be had")
    check(a and a["bottom"] <= 900, "oom: the whole answer within the first screen (%r)" % (a and a["bottom"]))
    dom = " ".join(m.text) if m else ""
    for want in ("held then by category: optimizer state 384 MiB", "held then by layer:", "what may help: the request alone"):
        check(want in dom, "oom: the answer says %r" % want)


@labels("browser")
def test_browser_oom_trials():
    """Twenty failed allocations, one fatal: one set of counts, in the text
    report's words; one card and one label on the timeline, the fatal one's;
    the failures got past inside a library in one line."""
    m, selftest = browser_test("trials")
    if m is None:
        return
    rc, out, _ = gp("analyze", trace("trials"))
    lines = [ln.strip() for ln in out.splitlines()]
    counts = next((ln for ln in lines if ln.startswith("Out of memory:")), None)
    past = next((ln for ln in lines if ln.startswith("got past inside a library:")), None)
    check(counts and "1 fatal" in counts and past, "trials: the text report's lines (%r, %r)" % (counts, past))
    dom = "".join(m.text)
    check(counts and counts in dom, "trials: the page's counts are the text's: %r" % counts)
    check(past and past in dom, "trials: the page's line of those got past is the text's: %r" % past)
    advice = [ln[len("advice: "):] for ln in lines[lines.index(past) + 1:] if ln.startswith("advice: ")] if past else []
    check(advice and all(a in dom for a in advice), "trials: their advice, as the text gives it: %r" % advice)
    check("1. Fatal: the program did not get past it" in dom and "2. " not in dom.split("Out of memory:")[-1],
          "trials: one card, the fatal one")
    eq([(x.get("text"), x.get("row")) for x in (selftest or {}).get("labels") or []], [("OOM: 16.0 GiB", 1)],
       "trials: one label on the timeline, the fatal failure's")


@labels("browser")
def test_browser_cuda():
    """A CUDA program: timeline and NVTX ranges; a healthy run's answer is
    its peak, the room left and its largest ranges, joined as ranges are."""
    m, selftest = browser_test("cuda")
    check_answer("cuda", selftest, "Peak: 768 MiB device at 0.161 s, room left at the peak: 3.25 GiB of 4.00 GiB")
    dom = " ".join(m.text) if m else ""
    check("held by layer: setup 384 MiB, solve > iteration > factorize 352 MiB" in dom,
          "cuda: the answer's ranges, joined with ' > '")


@labels("browser")
def test_browser_ranks():
    """A run directory of three ranks (tests/analyze/synth.py's "ranks"): the
    Ranks section drawn first, the rank that runs out first and what differs."""
    chromium()
    sys.path.insert(0, os.path.join(ROOT, "tests", "analyze"))
    import synth
    synth.scenario("ranks", TMP)
    page, text = make_page("ranks", [os.path.join(TMP, "ranks")], expect_notes=2)
    if text is None:
        return
    m, selftest = load("ranks", page)
    check_selftest("ranks", selftest, page_data(text), ["timeline", "live", "icicle", "stacked", "frag"])
    # the rank that runs out first and why, then its process first
    check_answer("ranks", selftest, "Runs out first: rank 1", ["process 7001, rank 1"])
    check_layout("ranks", selftest)
    dom = " ".join(m.text)
    if dom:
        check("Runs out first: rank 1" in dom, "ranks: the rank that runs out first is said")
        check("<Net>.fc1" in dom, "ranks: the layer that differs")
        check("Collectives at its peak: AllGather (stream 13, launched 0.200 ms before" in dom,
              "ranks: the first rank's collectives at its peak")
        check("AllGather +1" in dom and "(after AllReduce)" in dom, "ranks: the table's collective column")


@labels("browser")
def test_browser_advice():
    """The run's advice and the cache on the page (H100 traces of
    fragmentation.py and inference_no_grad.py, tests/data/single-h100): the
    same sentences as analyze's text and JSON, under What may help; the
    cache and its fragmentation under their own names."""
    chromium()
    adir = os.path.join(ROOT, "tests", "data", "single-h100")
    inputs = [os.path.join(adir, n + ".h100.json.gz") for n in ("frag_default", "inference_grad")]
    page, text = make_page("advice", inputs)
    if text is None:
        return
    m, selftest = load("advice", page, shot=False)
    dom = " ".join(m.text)
    want = []
    for path in inputs:
        rc, out, _ = gp("analyze", "--json", path)
        eq(rc, 0, "analyze --json %s" % path)
        adv = [a["text"] for d in json.loads(out)["devices"] for a in d.get("advice") or []]
        rc, txt, _ = gp("analyze", path)
        eq([ln[len("  advice: "):] for ln in txt.splitlines() if ln.startswith("  advice: ")], adv,
           "%s: the text's advice is the JSON's" % path)
        want += adv
    eq(len(want), 2, "advice: expandable_segments for one, no_grad for the other (%r)" % want)
    check("What may help" in dom and all(w in dom for w in want), "advice: the page shows the same advice")
    check("Cache and fragmentation" in dom and "most cached" in dom and
          "reserved while the cache held enough free bytes for the block" in dom,
          "advice: the cache and its fragmentation, named so")
    # PyTorch's segments at the moment shown first (the peak's): their
    # bytes add up to reserved then, analyze's at the peak; their blocks
    # to what was allocated
    peaks = []
    for path in inputs:
        rc, out, _ = gp("analyze", "--json", path)
        peaks += [d.get("peak") or {} for d in json.loads(out)["devices"]] if rc == 0 else []
    lives = [v for v in ((selftest or {}).get("live") or {}).values() if v.get("segments")]
    eq(len(lives), 2, "advice: both pages' breakdowns show PyTorch's segments")
    for v in lives:
        seg = v["segments"]
        eq(seg["bytes"], v["reserved"], "advice: the segment view's bytes add up to reserved then")
        check(any(p.get("reserved") == seg["bytes"] and p.get("bytes") == v["bytes"] for p in peaks),
              "advice: ... which is reserved at the peak, as analyze says (%r; peaks %r)"
              % (seg, [(p.get("bytes"), p.get("reserved")) for p in peaks]))
        eq(seg["used"], v["bytes"], "advice: the segments' blocks add up to what was allocated then")
    # hovering the largest band of the moment shown says its whole Python
    # stack, as analyze --at's bands name it
    stacked = 0
    for i, path in enumerate(inputs):
        v = ((selftest or {}).get("live") or {}).get("dev%d" % i)
        tip = (v or {}).get("tip")
        if not check(tip, "advice: %s: the page says what hovering the largest band shows" % path):
            continue
        # both inputs: the page's times are the run's, from the earliest
        rc, out, _ = gp("analyze", "--json", "--at", "%.9f" % v["t"], *inputs)
        d = json.loads(out)["devices"][i] if rc == 0 else {}
        bands, stacks = d.get("bands") or [], d.get("band_stacks")
        k = next((i for i in (d.get("at") or {}).get("largest") or [] if bands[i]["t"] == tip["t"] and bands[i]["bytes"] == tip["bytes"]), None)
        if not check(k is not None, "advice: %s: the band hovered is among analyze --at's largest" % path):
            continue
        st = stacks[k] if stacks else None
        want = ["  called from " + f for f in (st or [])[1:9]]
        got = [ln for ln in tip["lines"] if ln.startswith("  called from ")]
        eq(got, want, "advice: %s: the tip's frames are the band's stack" % path)
        check("line: " + (bands[k]["line"] or "") in tip["lines"] or not bands[k]["line"], "advice: %s: the tip names the band's line" % path)
        stacked += bool(want)
    check(stacked, "advice: a hovered band with a stack of more than its line")


@labels("browser")
def test_browser_summary():
    """A page from an analyze --json summary: no timeline, the rest."""
    chromium()
    rc, out, _ = gp("analyze", "--json", trace("train"))
    eq(rc, 0, "analyze --json")
    path = os.path.join(TMP, "train.summary.json")
    open(path, "w").write(out)
    page, text = make_page("summary", [path])
    if text is None:
        return
    _, selftest = load("summary", page)
    check_selftest("summary", selftest, page_data(text), ["icicle", "stacked", "leak", "steps"])


def labels_trace():
    """A training loop with module globals and a pinned host buffer (made
    before the model, in no phase); its path."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "analyze"))
    import synth
    from trace_format import KIND
    sim = synth.Sim(total=16 * synth.GiB, cmdline="python3 train.py")
    for _ in range(3):
        sim.alloc(100 * 1024, "other", kind=KIND.DEVICE_STATIC, async_=False, api="cuModuleLoadData")
    sim.alloc(4, "other", kind=KIND.PINNED_HOST, async_=False, api="cudaHostAlloc")
    synth.train(sim, 6)
    path = os.path.join(TMP, "labels.json.gz")
    sim.write(path)
    return path


JS_MODULES = os.path.join(ROOT, "viewer", "report", "assets", "js")


def js_sources():
    """The page's code: its modules' text, one after another."""
    return "".join(open(os.path.join(JS_MODULES, f), encoding="utf-8").read()
                   for f in sorted(os.listdir(JS_MODULES)) if f.endswith(".js"))


def js_table(js, name):
    """The entries of `const NAME = { key: "value", ... };` in the page's code."""
    m = re.search(r"const " + name + r" = \{(.*?)\};", js, re.S)
    if not check(m is not None, "the page's code defines %s" % name):
        return {}
    return dict(re.findall(r'"?([\w.]+)"?: "([^"]*)"', m.group(1)))


def byte_counts():
    """Byte counts where formatting can differ: unit boundaries, each
    precision's edges, exact halves (ties) and their neighbours, and a
    spread of others."""
    vals = {0, 1, 9, 10, 999, 1000, 1023}
    for u in range(1, 6):
        base = 1024 ** u
        for m in (1, 9.995, 9.996, 10, 99.95, 99.94, 999.5, 1023.5, 1.125, 1.375, 2.5, 10.25, 10.75,
                  100.5, 101.5, 123.456):
            v = int(m * base)
            vals.update((v - 1, v, v + 1))
        for frac in range(0, 1024, 8):  # halves of 1/1024 steps: ties at every precision
            vals.add(base + frac * base // 1024)
            vals.add(9 * base + frac * base // 1024 + base // 2048)
    x = 12345
    for _ in range(400):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        vals.add(x >> (x % 60))
    return sorted(v for v in vals if 0 <= v < 1 << 53)


def test_formatting():
    """The page's byte counts (format.js bytes()) are the text report's
    (viewer/analyze/result/units.h), digit for digit, run by node on the module
    itself."""
    node = shutil.which("node")
    if not node:
        raise Skip("no node on PATH: the page's formatting (format.js) is not run here")
    printer = os.environ.get("GPUPROF_PRINT_BYTES")
    if not printer:
        raise Skip("GPUPROF_PRINT_BYTES (CTest sets it) names no printer")
    vals = byte_counts()
    c = subprocess.run([printer] + [str(v) for v in vals], capture_output=True, text=True, timeout=60)
    eq(c.returncode, 0, "the C formatter ran")
    url = pathlib.Path(JS_MODULES, "format.js").as_uri()
    prog = ("import { bytes } from %s;\n"
            "import { readFileSync } from 'node:fs';\n"
            "const vals = JSON.parse(readFileSync(0, 'utf8'));\n"
            "process.stdout.write(vals.map((v) => bytes(v)).join('\\n') + '\\n');\n" % json.dumps(url))
    j = subprocess.run([node, "--input-type=module", "-e", prog], input=json.dumps(vals), capture_output=True,
                       text=True, timeout=60)
    if not check(j.returncode == 0, "node ran bytes(): %s" % j.stderr[-500:]):
        return
    got, want = j.stdout.splitlines(), c.stdout.splitlines()
    eq(len(got), len(want), "as many lines from node as from C")
    bad = [(v, g, w) for v, g, w in zip(vals, got, want) if g != w]
    check(not bad, "%d of %d byte counts differ between the page and the text, e.g. %s" % (
        len(bad), len(vals), bad[:5]))


def test_dev_page():
    """One page builder: dev/build_page.py makes its pages with gpuprof_page,
    which calls page.c as gpuprof report does. A page put back together from
    its own data is the command's page, byte for byte; a summary with a
    made-up timeline is a page as every page must be; gpuprof_page refuses
    data that is not one JSON object (exit 2, one line, no page)."""
    tool = os.environ.get("GPUPROF_PAGE")
    if not tool:
        raise Skip("GPUPROF_PAGE (CTest sets it) names no gpuprof_page")
    build_page = os.path.join(ROOT, "viewer", "report", "dev", "build_page.py")

    def dev(*args):
        p = subprocess.run([sys.executable, build_page] + list(args) + ["--page-tool", tool], capture_output=True,
                           text=True, timeout=120)
        return p.returncode, p.stderr

    for kind in ("train", "hostile"):
        page, text = make_page(kind, traces(kind), expect_notes=PAGES[kind][1])
        if text is None:
            continue
        again = os.path.join(TMP, kind + ".dev.html")
        rc, err = dev(page, "-o", again)
        if check(rc == 0, "%s: build_page.py exit %d: %s" % (kind, rc, err[-500:])):
            check(open(again, encoding="utf-8").read() == text,
                  "%s: build_page.py's page of the page's data is gpuprof report's page, byte for byte" % kind)
    rc, out, _ = gp("analyze", "--json", trace("oom"))
    summary = os.path.join(TMP, "oom.summary.json")
    open(summary, "w").write(out)
    page = os.path.join(TMP, "oom.dev.html")
    rc, err = dev(summary, "--synth-timeline", "-o", page)
    if check(rc == 0, "summary: build_page.py exit %d: %s" % (rc, err[-500:])):
        data = check_page("summary.dev", open(page, encoding="utf-8").read())
        check(data and all(d.get("timeline") for d in data["run"]["devices"]), "summary: a made-up timeline")
    for what, content in (("not JSON", "<html>"), ("a JSON array", "[1, 2]"), ("an object and more", '{"a": 1} x'),
                          ("an object and a NUL", '{"a": 1}\0'), ("empty", "")):
        path = os.path.join(TMP, "data.bad.json")
        open(path, "w").write(content)
        out = os.path.join(TMP, "bad.dev.html")
        p = subprocess.run([tool, path, out], capture_output=True, text=True, timeout=60)
        eq(p.returncode, 2, "gpuprof_page, %s: exit status" % what)
        check(len(p.stderr.splitlines()) == 1, "gpuprof_page, %s: one line (%r)" % (what, p.stderr))
        check(not os.path.exists(out), "gpuprof_page, %s: no page" % what)


def test_labels():
    """The page's labels are the text report's: PHASE_LABELS (format.js)
    as analyze's text shows the phase "none", KIND_MEANINGS as
    exporters/trace_format.def says what each kind is."""
    import trace_format
    js = js_sources()
    phases = js_table(js, "PHASE_LABELS")
    eq(sorted(phases), ["none"], "PHASE_LABELS: a label for none")
    rc, out, _ = gp("analyze", labels_trace())
    eq(rc, 0, "analyze exit status")
    rows = out[out.index("by phase (when made)"):].split("\n\n")[0].splitlines()[1:]
    names = [re.split(r"  +", r.strip())[0] for r in rows]
    check(phases.get("none") in names and "none" not in names,
          "the text's by-phase rows %r show none as the page does (%r)" % (names, phases.get("none")))
    with open(trace_format.DEF_PATH, encoding="utf-8") as f:
        meanings = {m[1]: m[2] for m in trace_format._KIND.findall(f.read())}
    meanings.pop("device")
    eq(js_table(js, "KIND_MEANINGS"), meanings, "KIND_MEANINGS: trace_format.def's meanings")


@labels("browser")
def test_browser_labels():
    """In the browser: the phase "none" shown as "(no phase)" in the by-phase
    legend and the largest allocations; module globals and pinned memory in
    one line below the memory table, the text report's words."""
    chromium()
    path = labels_trace()
    rc, out, _ = gp("analyze", path)
    line = next((ln.strip() for ln in out.splitlines() if ln.startswith("  not counted above:")), None)
    if not check(line is not None, "the text has its not-counted line"):
        return
    page, text = make_page("labels", [path])
    if text is None:
        return
    m, _ = load("labels", page, shot=False)
    dom = "\n".join(m.text)
    keep("labels.text.txt", dom)
    check(line[0].upper() + line[1:] in dom, "the page says what the text says: %r" % line)
    texts = [t.strip() for t in m.text]
    at = texts.index("By phase (when made)") if "By phase (when made)" in texts else len(texts)
    legend = texts[at:at + 25]
    check("(no phase)" in legend and "none" not in legend, "the by-phase legend says (no phase), not none: %r" % legend)
    check(not re.search(r"step \d+, none", dom), "no moment ends in none")


@labels("browser")
def test_browser_blocks():
    """A failure in a GPT-2-like model's forward, its 12 blocks alike: the
    peak's and the failure's layer tables show them as one row with the
    text's label, the first one's children once; the icicle draws them in
    the analysis' order (by number), not re-sorted by size."""
    chromium()
    sys.path.insert(0, os.path.join(ROOT, "tests", "analyze"))
    import synth
    sim = synth.Sim(total=2 * synth.GiB, cmdline="python3 gpt2.py")
    synth.gpt_blocks(sim, steps=2, leak0=0)
    sim.push("fwd:<GPT2>")
    for i in range(12):
        for part, size in (("attn", 6), ("mlp", 4)):
            sim.push("fwd:transformer.h.%d.%s" % (i, part))
            sim.alloc(size * synth.MiB, "activations")
            sim.pop()
    sim.push("fwd:lm_head")
    sim.oom(4 * synth.GiB)
    path = os.path.join(TMP, "blocks.json.gz")
    sim.write(path, cut="flush")
    page, text = make_page("blocks", [path], expect_notes=1)
    if text is None:
        return
    m, _ = load("blocks", page, shot=False)
    texts = [t.strip() for t in m.text]
    keep("blocks.text.txt", "\n".join(texts))
    check("0-11 (12 alike, each 10.0 MiB)" in texts, "blocks: the twelve blocks, one row")
    eq(texts.count("each: attn"), 2, "blocks: the first one's children once (the peak's table, the failure's)")
    svg = [t.strip() for t in m.svg_text]
    rows = list(texts)
    for t in svg:  # the icicle's labels are not table rows
        rows.remove(t)
    check("11" not in rows, "blocks: no row of a block of the run")
    # the icicle keeps the analysis' order: block 5, 4 KiB larger, in its
    # place; a label that does not fit whole is the name alone
    drawn = [int(x.group(1)) for x in (re.match(r"^(\d+)(?: · .*)?$", t) for t in svg) if x]
    check(drawn and drawn == sorted(drawn), "blocks: the icicle's blocks by number: %r" % drawn)


@labels("browser")
def test_browser_hostile():
    """Names that would act as HTML, or mislead: shown as text, and none
    of them ran (the title is not PWNED, no <img>, no script but the
    page's two, no handler attribute)."""
    m, _ = browser_test("hostile")
    if m is None:
        return
    check(m.title.strip() != "PWNED", "hostile: the title is not PWNED (%r)" % m.title)
    eq(len(m.tags("script")), 2, "hostile: the page's two scripts and no other")
    for tag in ("img", "image", "iframe", "object", "embed", "base", "form", "link"):
        eq(m.tags(tag), [], "hostile: no <%s>" % tag)
    handlers = [(t, k) for t, a in m.elements for k in a if k.lower().startswith("on")]
    eq(handlers, [], "hostile: no event handler attribute")
    text = "".join(m.text)
    keep("hostile.text.txt", text)
    for name in (make_traces.HOSTILE_SCRIPT, make_traces.HOSTILE_IMG, make_traces.HOSTILE_QUOTES,
                 make_traces.HOSTILE_MODULES[0], make_traces.HOSTILE_MODULES[1][:-1]):
        check(name in text, "hostile: the name %r shown as text" % name)
    check("./app --name" in text, "hostile: the command line shown")
    check(re.search(r"line.{1,8}sep", text, re.S), "hostile: the name with U+2028 shown")
    check(re.search(r"ctl.{1,40}bel.{1,40}evil", text, re.S), "hostile: the name with control characters shown")
    for ch, what in (("\x1b", "ESC"), ("\x07", "BEL"), ("\u009b", "C1 CSI (U+009B)"),
                     ("\u202e", "bidi override (U+202E)")):
        check(ch not in text, "hostile: no raw %s in the page's text (shown escaped)" % what)


def test_size():
    """The page of a 1,000,000-event trace: at most SIZE_BUDGET bytes."""
    path = trace("large", LARGE_EVENTS)
    out = os.path.join(TMP, "large.html")
    t0 = time.monotonic()
    rc, _, err = gp("report", path, "-o", out)
    secs = time.monotonic() - t0
    if not check(rc == 0, "large: gpuprof report exit %d: %s" % (rc, err[-500:])):
        return
    n = os.path.getsize(out)
    print("large (%d events): page %d bytes, gpuprof report %.1f s" % (LARGE_EVENTS, n, secs))
    check(n <= SIZE_BUDGET, "large: the page is %d bytes, more than %d" % (n, SIZE_BUDGET))
    data = page_data(open(out, encoding="utf-8").read())
    d, t = data["run"]["devices"][0], data["run"]["traces"][0]
    eq(t["events"], LARGE_EVENTS, "large: every event read")
    eq({k: t[k] for k in ("complete", "late_events", "unmatched_frees", "reused_addresses",
                          "unattributed_allocations", "window_overflows", "notes")},
       {"complete": True, "late_events": 0, "unmatched_frees": 0, "reused_addresses": 0,
        "unattributed_allocations": 0, "window_overflows": 0, "notes": []},
       "large: a trace as the recorder writes it (nothing late, unmatched, unattributed)")
    eq(d["leak"]["verdict"], "leak", "large: its slow leak found")
    check(d.get("timeline") and d["timeline"]["n"] <= 4096, "large: a bounded timeline")
    # the generator's lines, as tests/gpu/check_trace.py reads a trace
    sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
    import check_trace
    small = traces("large", 20_000)[0]
    rep = check_trace.Report(out=open(os.devnull, "w"))
    try:
        check_trace.load_trace(small, rep)
    except check_trace.Fatal:
        pass
    eq(rep.failed, [], "large: the generator's trace passes check_trace.py's format checks")


@labels("browser")
def test_browser_large():
    """The page of the 1,000,000-event trace opens: ready, its charts."""
    chromium()
    path = trace("large", LARGE_EVENTS)
    page = os.path.join(TMP, "large.html")
    rc, _, err = gp("report", path, "-o", page)
    if not check(rc == 0, "large: gpuprof report exit %d: %s" % (rc, err[-500:])):
        return
    _, selftest = load("large", page)
    check_selftest("large", selftest, page_data(open(page, encoding="utf-8").read()),
                   ["timeline", "live", "icicle", "stacked", "leak"])
    if isinstance(selftest, dict):
        ms = ready_ms(selftest)
        if ms is not None:
            print("large: ready after %.0f ms (the page's performance.now())" % ms)


def ready_ms(selftest):
    """The page's own time to ready, where its self-test records it."""
    for k in ("ready_ms", "ms", "time_ms", "render_ms", "elapsed_ms"):
        if isinstance(selftest.get(k), (int, float)):
            return float(selftest[k])
    return None


def check_base(data):
    eq(data["inputs"], [trace("wide")], "base: the run's inputs")
    eq(data["base_inputs"], [trace("train")], "base: the base's inputs")
    cmp = data.get("compare") or {}
    eq(cmp.get("schema"), "gpuprof.compare/1", "base: compare's document")
    eq(cmp.get("verdict"), "regression", "base: the larger layer is a regression")
    layers = [x["name"] for p in cmp.get("pairs") or [] for x in p.get("layers") or []]
    eq(layers, ["<Net>.blocks.1.mlp"], "base: what grew")
    for side in ("run", "base"):
        devs = (data.get(side) or {}).get("devices") or []
        check(devs and devs[0].get("timeline"), "base: the %s's timeline" % side)


def test_base():
    """--base: both runs and compare's verdict in the data."""
    _, text = make_page("base", [trace("wide")], base=[trace("train")])
    if text is None:
        return
    data = check_page("base", text)
    if data:
        check_base(data)
    # a base that is not a trace: exit 2, no page
    bad = os.path.join(TMP, "hello.json")
    open(bad, "w").write('{"hello": 1}\n')
    out = os.path.join(TMP, "base.bad.html")
    rc, _, err = gp("report", trace("wide"), "--base", bad, "-o", out)
    eq(rc, 2, "a bad --base: exit 2")
    check(len(err.splitlines()) == 1 and err.startswith("gpuprof: "), "a bad --base: one line (%r)" % err)
    check(not os.path.exists(out), "a bad --base: no page")


@labels("browser")
def test_browser_base():
    """--base in the browser: the two-run chart (steps, both runs)."""
    chromium()
    page, text = make_page("base", [trace("wide")], base=[trace("train")])
    if text is None:
        return
    _, selftest = load("base", page)
    check_selftest("base", selftest, page_data(text), ["timeline", "live", "icicle", "stacked", "leak", "frag", "steps", "aligned"])
    # the two runs' memory over time, laid over each other by step
    aligned = [c for c in (selftest or {}).get("charts") or [] if c.get("kind") == "aligned"]
    eq([(c.get("id"), c.get("series")) for c in aligned], [("cmp0-aligned", 2)], "base: one chart of both runs by step")


def bad_inputs():
    """(what, path): inputs gpuprof report must refuse."""
    bad = os.path.join(ROOT, "tests", "analyze", "bad")
    for f in ("gzip_corrupt.gz", "bad_json_in_the_middle.json", "empty", "binary.bin", "first_event_not_meta.json"):
        yield f, os.path.join(bad, f)
    blob = open(trace("train"), "rb").read()
    mid = len(blob) // 2
    damaged = os.path.join(TMP, "damaged.json.gz")
    open(damaged, "wb").write(blob[:mid] + bytes(64) + blob[mid + 64:])
    yield "a trace with 64 bytes zeroed in its middle", damaged
    for i, (what, doc) in enumerate((("a JSON object that is no summary", {"hello": 1}),
                      ("another schema", {"schema": "gpuprof.analyze/2", "devices": []}),
                      ("compare's report", {"schema": "gpuprof.compare/1", "verdict": "ok", "pairs": []}),
                      ("a JSON array", [1, 2, 3]))):
        p = os.path.join(TMP, "bad.%d.json" % i)
        open(p, "w").write(json.dumps(doc))
        yield what, p
    rc, out, _ = gp("analyze", "--json", trace("train"))
    p = os.path.join(TMP, "summary.cut.json")
    open(p, "w").write(out[:len(out) // 2])
    yield "a summary cut in half", p


def test_bad():
    """Bad input: exit 2, one gpuprof: line, no page (nor a temporary
    file); a page already at -o stays as it was."""
    old = os.path.join(TMP, "old.html")
    for what, path in bad_inputs():
        out = os.path.join(TMP, "new.html")
        rc, stdout, err = gp("report", path, "-o", out)
        eq(rc, 2, "%s: exit status" % what)
        eq(stdout, "", "%s: nothing on stdout" % what)
        lines = err.splitlines()
        check(len(lines) == 1 and lines[0].startswith("gpuprof: "),
              "%s: one gpuprof: line on stderr, got %r" % (what, err[:300]))
        check(not os.path.exists(out), "%s: no page" % what)
        left = [f for f in os.listdir(TMP) if f.startswith("new.html")]
        eq(left, [], "%s: nothing left beside the page" % what)
        # an existing page is not touched
        open(old, "w").write("an older page\n")
        os.utime(old, (1_000_000_000, 1_000_000_000))
        rc, _, _ = gp("report", path, "-o", old, "--force")
        eq(rc, 2, "%s, over an existing page: exit status" % what)
        eq((open(old).read(), int(os.stat(old).st_mtime)), ("an older page\n", 1_000_000_000),
           "%s: the existing page untouched" % what)
        eq([f for f in os.listdir(TMP) if f.startswith("old.html.")], [], "%s: no temporary file left" % what)
    # usage errors
    for args, why in ((["-o", os.path.join(TMP, "x.html")], "no TRACE"),
                      ([trace("train"), "-o", ""], "an empty -o"),
                      ([trace("train"), "--bogus"], "an unknown option"),
                      ([trace("train"), "--top", "0"], "--top 0"),
                      ([os.path.join(TMP, "missing.json.gz")], "a missing file")):
        rc, stdout, err = gp(*(["report"] + args))
        eq(rc, 2, "%s: exit status" % why)
        check(err.startswith("gpuprof: "), "%s: says so (%r)" % (why, err))
    check(not os.path.exists(os.path.join(TMP, "report.html")), "no page at the default path after errors")
    # a directory that cannot be written: exit 1, one line
    ro = os.path.join(TMP, "no", "such", "dir", "page.html")
    rc, _, err = gp("report", trace("train"), "-o", ro)
    eq(rc, 1, "an -o in a missing directory: exit 1")
    check(len(err.splitlines()) == 1 and err.startswith("gpuprof: "), "an unwritable -o: one line (%r)" % err)


def main():
    global GP, TMP, ARTIFACTS
    if sys.argv[1:] == ["--list"]:
        return list_tests(globals())
    args = [a for a in sys.argv[1:] if a != "--update"]
    if "--artifacts" in args:
        i = args.index("--artifacts")
        ARTIFACTS = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        raise SystemExit(__doc__)
    GP = os.path.abspath(args[0])
    fn = globals().get("test_" + args[1])
    if not fn:
        raise SystemExit("unknown test %s" % args[1])
    TMP = tempfile.mkdtemp(prefix="gpuprof-report.")
    try:
        fn()
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return report()


if __name__ == "__main__":
    sys.exit(main())
