#!/usr/bin/env python3
"""gpuprof's environment variables against their one list,
exporters/env_vars.def:

- the list itself: each entry well formed, its default within its bounds;
- C (profiler/, viewer/, exporters/): no "GPUPROF_..." string literal
  outside the list; code names a variable by GP_ENV_<ID> (env_vars.h).
  Only a command's help (viewer/cmd_*.c) spells names in its text, and
  those must be in the list (the ENVIRONMENT section: ones users set);
- who reads and sets each, as the list says: the recorder
  (profiler/config.c), the launcher (viewer/cmd_trace.c, viewer/trace/),
  analyze (viewer/analyze/) name it, and only they; the build's tools
  (.pip/, the page's dev/) read the BUILD ones and only those; the Python hooks
  (profiler/python/, which cannot include the list) read the variables
  marked HOOKS and only those, with the list's defaults;
- the documents: the README's table lists exactly the variables users set,
  with the list's defaults; every GPUPROF_ name the documents mention is a
  variable of the list or a CMake option.

  test_env_vars.py [ROOT]     exit 0 when all agree, 1 otherwise"""
import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEF = "exporters/env_vars.def"
SETTERS = {"USER", "LAUNCHER", "LAUNCHER_USER", "DEV"}
READERS = {"RECORDER", "HOOKS", "RECORDER_HOOKS", "LAUNCHER", "ANALYZE", "READER", "BUILD"}
# BUILD: the project's own build and development tools, in Python
BUILD_TOOLS = [".pip/*.py", "viewer/report/dev/*.py"]
NAME = re.compile(r"GPUPROF_[A-Z0-9_]*[A-Z0-9]")
ENTRY = re.compile(r'^GP_ENV\((\w+), (\w+), ("[^"]*"|\d+), (\d+), (\d+), (\w+), (\w+), "([^"]*)"\)$')

bad = []


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def files(*patterns):
    out = []
    for p in patterns:
        out += glob.glob(os.path.join(ROOT, p), recursive=True)
    return sorted(os.path.relpath(p, ROOT) for p in out if os.path.isfile(p))


def load_list():
    """{ID: entry} from the list, each line checked."""
    entries = {}
    for n, line in enumerate(read(DEF).splitlines(), 1):
        if not line.startswith("GP_ENV("):
            continue
        m = ENTRY.match(line)
        where = "%s:%d" % (DEF, n)
        if not m:
            bad.append("%s: not GP_ENV(ID, TYPE, DEFAULT, MIN, MAX, SET, READ, \"meaning\") "
                       "on one line" % where)
            continue
        vid, typ, dflt, lo, hi, setter, reader, meaning = m.groups()
        lo, hi = int(lo), int(hi)
        if vid in entries:
            bad.append("%s: GPUPROF_%s listed twice" % (where, vid))
        if setter not in SETTERS:
            bad.append("%s: SET %s is none of %s" % (where, setter, ", ".join(sorted(SETTERS))))
        if reader not in READERS:
            bad.append("%s: READ %s is none of %s" % (where, reader, ", ".join(sorted(READERS))))
        if typ == "NUM":
            if dflt.startswith('"') or not lo <= int(dflt) <= hi:
                bad.append("%s: a NUM's DEFAULT is a number within MIN..MAX" % where)
            dflt = int(dflt)
        elif typ == "TEXT":
            if not dflt.startswith('"') or lo or hi:
                bad.append("%s: a TEXT's DEFAULT is a string, MIN and MAX 0" % where)
            dflt = dflt.strip('"')
        else:
            bad.append("%s: TYPE %s is neither NUM nor TEXT" % (where, typ))
        if not meaning:
            bad.append("%s: no meaning" % where)
        entries[vid] = dict(type=typ, default=dflt, min=lo, max=hi, set=setter, read=reader)
    if not entries:
        bad.append("%s: no entries" % DEF)
    return entries


def c_literals(text):
    """The string literals of C text, comments left out: (line, text)."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
            continue
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                out.append((line, text[i + 1:j]))
            line += text.count("\n", i, j)
            i = j + 1
            continue
        i += 1
    return out


def check_c(entries):
    """No GPUPROF_ literal in the C sources; help text names listed ones
    (or CMake options)."""
    options = cmake_options()
    for rel in files("profiler/**/*.c", "profiler/**/*.h", "profiler/**/*.cpp",
                     "viewer/**/*.c", "viewer/**/*.h", "exporters/**/*.c", "exporters/**/*.h"):
        if rel == "exporters/env_vars.h":
            continue
        help_text = re.match(r"viewer/cmd_\w+\.c$", rel) is not None
        for line, lit in c_literals(read(rel)):
            for m in NAME.finditer(lit):
                where = "%s:%d" % (rel, line)
                vid = m.group(0)[len("GPUPROF_"):]
                if not help_text or m.start() == 0:
                    bad.append("%s: \"%s\" spelled out: write GP_ENV_%s (exporters/env_vars.h)"
                               % (where, m.group(0), vid))
                elif vid not in entries and m.group(0) not in options:
                    bad.append("%s: the help names %s, which %s does not list"
                               % (where, m.group(0), DEF))
    # the ENVIRONMENT a command's help lists: variables users set
    for rel in files("viewer/cmd_*.c"):
        m = re.search(r"\.environment\s*=\s*((?:\s*\"(?:[^\"\\]|\\.)*\")+)", read(rel))
        if not m:
            continue
        for name in sorted(set(re.findall(r'"\s+(GPUPROF_\w+)', m.group(1)))):
            e = entries.get(name[len("GPUPROF_"):])
            if e and "USER" not in e["set"]:
                bad.append("%s: ENVIRONMENT offers %s, which %s says users do not set"
                           % (rel, name, DEF))


def users_of(patterns, vid, calls):
    """The files that read or set GPUPROF_<vid>: pass GP_ENV_<vid> to one
    of calls, or, calls None, name it at all."""
    pat = (r"\bGP_ENV_%s\b" % vid if calls is None else
           r"\b(?:%s)\(\s*GP_ENV_%s\b" % ("|".join(calls), vid))
    return [rel for rel in files(*patterns) if re.search(pat, read(rel))]


def check_readers(entries):
    """READ and SET against the code that reads and sets each variable: the
    recorder names them only to read them; the launcher and analyze
    getenv, setenv or unsetenv them (and may name them in messages)."""
    env_calls = ["getenv", "setenv", "unsetenv"]
    where = {
        "RECORDER": (["profiler/*.c"], None),
        "LAUNCHER": (["viewer/cmd_trace.c", "viewer/trace/*.c"], env_calls),
        "ANALYZE": (["viewer/analyze/**/*.c"], env_calls),
        "READER": (["exporters/trace_*.c"], env_calls),
    }
    for vid, e in sorted(entries.items()):
        roles = set(e["read"].split("_"))
        if "LAUNCHER" in e["set"]:
            roles.add("LAUNCHER")
        for role, (patterns, calls) in where.items():
            users = users_of(patterns, vid, calls)
            if role in roles and not users:
                bad.append("GPUPROF_%s: %s says the %s reads or sets it; no file there does"
                           % (vid, DEF, role.lower()))
            elif role not in roles and users:
                bad.append("GPUPROF_%s: %s read or set it, but %s does not say the %s does"
                           % (vid, ", ".join(users), DEF, role.lower()))


def check_build_tools(entries):
    """The build's tools read the BUILD variables, only those."""
    named = {}
    for rel in files(*BUILD_TOOLS):
        for m in re.finditer(r"""environ(?:\.get\(|\[)\s*["'](GPUPROF_\w+)["']""", read(rel)):
            named.setdefault(m.group(1)[len("GPUPROF_"):], rel)
    for vid, e in sorted(entries.items()):
        if e["read"] == "BUILD" and vid not in named:
            bad.append("GPUPROF_%s: %s says the build's tools read it; none of %s does"
                       % (vid, DEF, ", ".join(BUILD_TOOLS)))
    for vid, rel in sorted(named.items()):
        if vid not in entries:
            bad.append("%s: reads GPUPROF_%s, which %s does not list" % (rel, vid, DEF))
        elif entries[vid]["read"] != "BUILD":
            bad.append("%s: reads GPUPROF_%s, which %s does not say the build's tools read"
                       % (rel, vid, DEF))


def check_hooks(entries):
    """The Python hooks read the HOOKS variables, only those, as listed."""
    read_by_hooks = set()
    for rel in files("profiler/python/*.py"):
        text = read(rel)
        for m in NAME.finditer(text):
            vid = m.group(0)[len("GPUPROF_"):]
            if vid not in entries:
                bad.append("%s: %s is not in %s" % (rel, m.group(0), DEF))
        for m in re.finditer(r"""["'](GPUPROF_\w+)["']""", text):
            read_by_hooks.add(m.group(1)[len("GPUPROF_"):])
        # env.get("GPUPROF_X", "default"): the list's default
        for m in re.finditer(r"""\.get\(\s*["']GPUPROF_(\w+)["']\s*,\s*["']([^"']*)["']\s*\)""", text):
            e = entries.get(m.group(1))
            if e and m.group(2) and str(e["default"]) != m.group(2):
                bad.append("%s: GPUPROF_%s defaults to %r there, %r in %s"
                           % (rel, m.group(1), m.group(2), str(e["default"]), DEF))
    for vid, e in sorted(entries.items()):
        listed = "HOOKS" in e["read"]
        if listed and vid not in read_by_hooks:
            bad.append("GPUPROF_%s: %s says the Python hooks read it; profiler/python/*.py do not"
                       % (vid, DEF))
        elif not listed and vid in read_by_hooks:
            bad.append("GPUPROF_%s: the Python hooks read it; %s does not say so" % (vid, DEF))


def cmake_options():
    opts = set()
    for rel in files("CMakeLists.txt", "*/CMakeLists.txt", "*/*/CMakeLists.txt"):
        opts |= set(re.findall(r"\boption\((GPUPROF_\w+)", read(rel)))
        opts |= set(re.findall(r"\bset\((GPUPROF_\w+)\s+\S+\s+CACHE\b", read(rel)))
    return opts


def check_docs(entries):
    """The README's table, and every name the documents mention."""
    options = cmake_options()
    for rel in files("README.md", "ARCHITECTURE.md", "exporters/*.md", "profiler/**/*.md",
                     "viewer/**/*.md"):
        for m in set(NAME.findall(read(rel))):
            if m[len("GPUPROF_"):] not in entries and m not in options:
                bad.append("%s mentions %s, neither a variable of %s nor a CMake option"
                           % (rel, m, DEF))
    rows = {}
    for line in read("README.md").splitlines():
        m = re.match(r"\|\s*`GPUPROF_(\w+)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    if not rows:
        bad.append("README.md: no table of the environment variables")
        return
    # the table is of the variables a traced run reads; the build's are
    # documented where the build is
    users = {vid for vid, e in entries.items() if "USER" in e["set"] and e["read"] != "BUILD"}
    for vid in sorted(users - set(rows)):
        bad.append("README.md: its table lacks GPUPROF_%s, which %s says users set" % (vid, DEF))
    for vid in sorted(set(rows) - users):
        bad.append("README.md: its table offers GPUPROF_%s, which %s says users do not set"
                   % (vid, DEF))
    for vid in sorted(set(rows) & users):
        e = entries[vid]
        m = re.search(r"\bdefault:? `?([0-9]+)\b", rows[vid])
        if e["type"] == "NUM" and m and int(m.group(1)) != e["default"]:
            bad.append("README.md: GPUPROF_%s's default is %s there, %d in %s"
                       % (vid, m.group(1), e["default"], DEF))


def main():
    entries = load_list()
    check_c(entries)
    check_readers(entries)
    check_hooks(entries)
    check_build_tools(entries)
    check_docs(entries)
    for b in bad:
        print("test_env_vars: " + b)
    print("test_env_vars: %d variables, %s" % (len(entries), "FAILED" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
