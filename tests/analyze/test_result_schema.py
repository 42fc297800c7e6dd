#!/usr/bin/env python3
"""SCHEMA.md and the report page's code agree with
viewer/analyze/result/result_schema.def, the one list of gpuprof.analyze/1's members:

  doc      every member of the definition is named (`key`) in the section
           of SCHEMA.md its list names, and every member a table of SCHEMA.md
           names in its first column is one of that section's lists
  page     every member the page's code (every *.js under
           viewer/report/assets/, however it is split in modules) reads
           from the data is a member of the definition, of compare's
           report (viewer/compare/json.c) or of the report's data
           (viewer/report/report.c): `.member`, `?.member`, `["member"]`,
           a destructuring, and the keys the page passes to its helpers
           col(label, "key") and sumOf(list, "key")
  def      the definition is well formed: every list read, every
           render_json.c and summary.c use of it names a list there; every
           member of the analyze and report goldens' documents is in it

Run: python3 tests/analyze/test_result_schema.py [doc|page|def|all]"""
import glob
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "viewer", "analyze", "result"))
import result_schema as rs  # noqa: E402

SCHEMA_MD = os.path.join(ROOT, "viewer", "analyze", "SCHEMA.md")
ASSETS = os.path.join(ROOT, "viewer", "report", "assets")

# What the page reads that is no member of any of its data: the browser's,
# JavaScript's and its chart libraries' properties. Names the page gives its
# own objects (object literals' keys, members it assigns) are found in its
# code and need no entry here.
PAGE_NAMES = {
    # JavaScript
    "length", "prototype", "hasOwnProperty", "message", "stack", "done", "size", "PI",
    # the DOM and events
    "style", "display", "body", "documentElement", "textContent", "innerHTML", "className", "classList",
    "dataset", "target", "currentTarget", "clientX", "clientY", "pageX", "pageY", "offsetX", "offsetY",
    "offsetWidth", "offsetHeight", "clientWidth", "clientHeight", "scrollX", "scrollY", "innerWidth",
    "innerHeight", "key", "hash", "location", "parentNode", "firstChild", "children", "value",
    "checked", "width", "height", "left", "top", "right", "bottom", "background", "paddingLeft",
    "devicePixelRatio", "fillStyle", "strokeStyle", "lineWidth", "font", "textAlign", "textBaseline",
    "globalAlpha", "id", "title", "hidden", "open", "selectedIndex", "options", "data", "lastChild",
    "shiftKey", "button", "canvas", "scrollWidth", "nextSibling",
    # uPlot, d3
    "over", "scales", "series", "select", "cursor", "idx", "idxs", "bbox", "axes", "min", "max",
    "x", "y", "x0", "x1", "y0", "y1", "depth", "parent", "leaves", "descendants", "val", "sync",
    "client", "show", "points", "fill", "stroke", "root", "ctx",
}


def section_texts(doc):
    """SCHEMA.md's sections: heading (its words before a parenthesis) -> text."""
    parts = re.split(r"^(#{2,3} .+)$", doc, flags=re.M)
    out = {}
    for head, text in zip(parts[1::2], parts[2::2]):
        name = re.sub(r"\s*\(.*$", "", head.lstrip("#").strip())
        out[name] = text
    return out


def table_members(text):
    """The `names` of the first column of the section's tables."""
    names = set()
    for row in text.splitlines():
        cells = row.split("|")
        if len(cells) > 3 and row.startswith("|") and "`" in cells[1]:
            names.update(re.findall(r"`([A-Za-z_][\w]*)`", cells[1]))
    return names


def check_doc(objs, doc):
    errors = []
    secs = section_texts(doc)
    by_section = {}
    for o in objs.values():
        if o.section not in secs:
            errors.append("%s: SCHEMA.md has no section %r" % (o.id, o.section))
            continue
        by_section.setdefault(o.section, set()).update(o.members)
        named = set(re.findall(r"`([A-Za-z_]\w*)`", secs[o.section]))
        for m in o.members.values():
            # every step_when is explained once, beside the Moment
            where = doc if m.type == "STEP_WHEN" else secs[o.section]
            if "`%s`" % m.key not in where and m.key not in named:
                errors.append("%s.%s (%s) is not in SCHEMA.md's section %r"
                              % (o.type_name, m.key, ", ".join(o.paths), o.section))
    for name, keys in sorted(by_section.items()):
        for key in sorted(table_members(secs[name]) - keys):
            errors.append("SCHEMA.md's section %r has a row for `%s`, which no list of that section "
                          "in result_schema.def holds" % (name, key))
    return errors


def strip_comments(js, blank_strings=False):
    """The code without its comments, lines kept; strings kept (col("layer",
    "name")), or their words blanked (blank_strings: "see www.w3.org" is no
    member read). Template literals stay: their ${} hold code."""
    out, i, n = [], 0, len(js)
    while i < n:
        c = js[i]
        if c in "\"'`":
            j = i + 1
            while j < n and js[j] != c:
                j += 2 if js[j] == "\\" else 1
            text = js[i:j + 1]
            if blank_strings and c != "`":
                text = c + re.sub(r"[^\n]", " ", text[1:-1]) + c
            out.append(text)
            i = j + 1
        elif js.startswith("//", i):
            i = js.find("\n", i)
            i = n if i < 0 else i
        elif js.startswith("/*", i):
            end = js.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * js.count("\n", i, end))
            i = end
        elif c == "/" and re.match(r"[=(,:!&|?{};\[]\s*$", "".join(out[-3:])[-8:] or "("):
            # a regular expression literal: skip it whole (it may hold quotes)
            j = i + 1
            while j < n and js[j] != "/" and js[j] != "\n":
                j += 2 if js[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


_NAME = r"[A-Za-z_$][\w$]*"
# what the page reads: a member not called, a key in brackets, a
# destructuring, the keys of the page's helpers that read rows
READS = [re.compile(r"(?<=[\w$\])])\??\.(%s)\b(?!\s*\()" % _NAME),
         re.compile(r"\[\s*\"(%s)\"\s*\]" % _NAME),
         re.compile(r"\bcol\(\s*\"[^\"]*\"\s*,\s*\"(%s)\"" % _NAME),
         re.compile(r"\bsumOf\([^,()]*,\s*\"(%s)\"\s*\)" % _NAME)]
DESTRUCTURE = re.compile(r"\b(?:const|let|var)\s*\{([^{}]*)\}\s*=")
# what the page makes itself: object literals' keys, members it assigns
OWN = [re.compile(r"[{,]\s*(%s)\s*:" % _NAME),
       re.compile(r"\.\s*(%s)\s*(?:=(?!=)|\+=|-=)" % _NAME),
       re.compile(r"[{,]\s*(%s)\s*(?=[,}])" % _NAME)]


def page_reads(files):
    """name -> first place read; and the names the page makes itself."""
    reads, own = {}, set()
    for path in files:
        text = open(path, encoding="utf-8").read()
        code, bare = strip_comments(text), strip_comments(text, blank_strings=True)
        for rx in OWN:
            own.update(rx.findall(bare))
        found = [(m.group(1), m.start()) for m in READS[0].finditer(bare)]
        found += [(m.group(1), m.start()) for rx in READS[1:] for m in rx.finditer(code)]
        for m in DESTRUCTURE.finditer(code):
            for part in m.group(1).split(","):
                name = part.split(":")[0].split("=")[0].strip()
                if re.fullmatch(_NAME, name):
                    found.append((name, m.start()))
        for name, pos in found:
            line = code.count("\n", 0, pos) + 1
            reads.setdefault(name, "%s:%d" % (os.path.relpath(path, ROOT), line))
    return reads, own


def other_data_keys():
    """Members of the page's data that are not the analysis's: compare's
    report (gpuprof.compare/1) and the report's own top level."""
    keys = set()
    for rel, rx in (("viewer/compare/json.c", r"\"([a-z_]+)\""),
                    ("viewer/report/report.c", r"json_object_object_add\(\s*\w+,\s*\"(\w+)\"")):
        keys.update(re.findall(rx, open(os.path.join(ROOT, rel), encoding="utf-8").read()))
    return keys


def check_page(objs, files):
    errors = []
    if not files:
        return ["no *.js under %s" % os.path.relpath(ASSETS, ROOT)]
    members = rs.keys(objs) | other_data_keys()
    reads, own = page_reads(files)
    for name, where in sorted(reads.items(), key=lambda kv: kv[1]):
        if name in members or name in PAGE_NAMES or name in own:
            continue
        errors.append("%s: the page reads `%s`, which is no member of gpuprof.analyze/1 "
                      "(result_schema.def), of compare's report or of the report's data; if the "
                      "page's own, add it to PAGE_NAMES here" % (where, name))
    return errors


def check_def(objs):
    errors = []
    used = set()
    for rel in ("viewer/analyze/render/render_json.c", "viewer/compare/summary.c"):
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        for name in re.findall(r"\bGP_RS_([A-Z_]+)\b", text):
            used.add(name)
            if name not in objs:
                errors.append("%s uses GP_RS_%s, which result_schema.def does not define" % (rel, name))
    text = open(rs.DEF_PATH, encoding="utf-8").read()
    for name in re.findall(r"^#define GP_RS_(\w+)\(M\)", text, re.M):
        if name not in objs:
            errors.append("result_schema.def: GP_RS_%s's line was not read" % name)
    entries = len(re.findall(r"^\tM\(", text, re.M))
    if entries != sum(len(o.members) for o in objs.values()):
        errors.append("result_schema.def: %d entries, %d read" % (entries, sum(len(o.members) for o in objs.values())))
    return errors


def check_goldens(objs):
    """Every member of the analyze goldens' documents, and of the report
    golden's, is one the definition lists (what render_json.c writes by hand
    too: groups, the leak, the ranks, the timeline); kinds' members are
    memory kinds' names."""
    errors = []
    keys = rs.keys(objs)

    def walk(node, where, name):
        if isinstance(node, dict):
            for k, v in node.items():
                if where.endswith(".kinds"):
                    walk(v, where + ".*", name)
                    continue
                if k not in keys:
                    errors.append("%s: %s.%s is in no list of result_schema.def" % (name, where, k))
                walk(v, where + "." + k, name)
        elif isinstance(node, list):
            for x in node:
                walk(x, where + "[]", name)

    files = sorted(glob.glob(os.path.join(ROOT, "tests", "analyze", "golden", "*.json")))
    for f in files:
        walk(json.load(open(f, encoding="utf-8")), "", os.path.relpath(f, ROOT))
    # the report's data: its run's and base's documents, with their timelines
    pages = sorted(glob.glob(os.path.join(ROOT, "tests", "report", "golden", "*.data.json")))
    for f in pages:
        data = json.load(open(f, encoding="utf-8"))
        for side in ("run", "base"):
            if isinstance(data.get(side), dict):
                walk(data[side], "", "%s: %s" % (os.path.relpath(f, ROOT), side))
    if not files or not pages:
        errors.append("no tests/analyze/golden/*.json or tests/report/golden/*.data.json")
    return errors


def main(argv):
    what = argv[1] if len(argv) > 1 else "all"
    objs = rs.load()
    errors = []
    if what in ("def", "all"):
        errors += check_def(objs) + check_goldens(objs)
    if what in ("doc", "all"):
        errors += check_doc(objs, open(SCHEMA_MD, encoding="utf-8").read())
    if what in ("page", "all"):
        files = sorted(f for f in glob.glob(os.path.join(ASSETS, "**", "*.js"), recursive=True)
                       if "node_modules" not in f.split(os.sep) and not f.endswith(".min.js"))
        errors += check_page(objs, files)
    for e in errors:
        print("FAIL:", e)
    print("%d lists, %d members checked (%s): %d problems"
          % (len(objs), sum(len(o.members) for o in objs.values()), what, len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
