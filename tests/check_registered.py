#!/usr/bin/env python3
"""Every test a driver holds is one CTest runs: the test_* functions of the
Python drivers and the tests/cli/test_*.sh scripts against the name lists
of their folders' CMakeLists.txt (set(_gp_<folder>_tests ...), every
set() of the list, as one build or another may name its own), both ways.
A function or script no list names never runs; a name no function has
fails only when run.

  check_registered.py [ROOT]     exit 0 when they agree, 1 otherwise"""
import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))
# folder: (the driver(s) whose test_* functions are the tests, the CMake lists naming them)
FOLDERS = {
    "analyze": (["test_analyze.py"], ["_gp_analyze_tests"]),
    "compare": (["test_compare.py"], ["_gp_compare_tests"]),
    "report": (["test_report.py"], ["_gp_report_tests", "_gp_report_browser_tests"]),
    "merge": (["test_merge.py"], ["_gp_merge_tests"]),
}


def cmake_names(text, var):
    """The names of every set(var ...) in text, or None if there is none."""
    blocks = re.findall(r"set\(%s\s*\n(.*?)\n\s*\)" % re.escape(var), text, re.S)
    if not blocks:
        return None
    return {w for b in blocks for l in b.splitlines() for w in l.split("#")[0].split()}


def main():
    bad = []
    for folder, (drivers, lists) in FOLDERS.items():
        d = os.path.join(ROOT, "tests", folder)
        text = open(os.path.join(d, "CMakeLists.txt")).read()
        names = set()
        for var in lists:
            got = cmake_names(text, var)
            if got is None:
                bad.append("tests/%s/CMakeLists.txt: no list %s" % (folder, var))
                continue
            names |= got
        funcs = set()
        for drv in drivers:
            funcs |= set(re.findall(r"^def test_(\w+)\(", open(os.path.join(d, drv)).read(), re.M))
        for f in sorted(funcs - names):
            bad.append("tests/%s: test_%s() is in no list of CMakeLists.txt: CTest never runs it" % (folder, f))
        for n in sorted(names - funcs):
            bad.append("tests/%s/CMakeLists.txt names %s, which no test_%s() holds" % (folder, n, n))
    d = os.path.join(ROOT, "tests", "cli")
    text = open(os.path.join(d, "CMakeLists.txt")).read()
    names = cmake_names(text, "_gp_cli_tests") or set()
    scripts = {os.path.basename(p)[5:-3] for p in glob.glob(os.path.join(d, "test_*.sh"))}
    for s in sorted(scripts - names):
        bad.append("tests/cli/test_%s.sh is in no list of CMakeLists.txt: CTest never runs it" % s)
    for n in sorted(names - scripts):
        bad.append("tests/cli/CMakeLists.txt names %s, which no test_%s.sh is" % (n, n))
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    print("%d test(s) unregistered or missing" % len(bad) if bad else "every driver's tests are registered")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
