#!/usr/bin/env python3
"""Every test file is one CTest runs: each tests/**/test_*.c, test_*.py and
test_*.sh is named by the CMakeLists.txt of its folder or of a folder above
it: by its file name, as test_${PART}.c with PART among the words of that
CMakeLists.txt (a foreach over parts), or by a test_*.EXT glob there; or
tests/run_tests.sh, the test command, runs it by its path (a test that
builds the whole project again, as pip does). A test file that nothing
names never runs.

The test functions of the Python drivers and tests/cli's scripts need no
such check: CMake registers them from the drivers and the folder
(tests/driver_tests.cmake, tests/cli/CMakeLists.txt).

  check_registered.py [ROOT]     exit 0 when every test file is registered, 1 otherwise"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
# test data, not tests
SKIP_DIRS = {"golden", "data", "fuzz_seeds", "bad", "__pycache__"}


def named(name, cmake):
    """Whether the text of a CMakeLists.txt names the test file name."""
    stem, ext = os.path.splitext(name)
    if re.search(r"(^|[/\s\"])%s([\s\"\)]|$)" % re.escape(name), cmake, re.M):
        return True
    if re.search(r"[/\s\"]test_\*%s[\s\"\)]" % re.escape(ext), cmake):
        return True
    part = stem[len("test_"):]
    return ("test_${" in cmake and re.search(r"test_\$\{\w+\}%s" % re.escape(ext), cmake) is not None
            and re.search(r"(?<![\w$])%s(?!\w)" % re.escape(part), cmake) is not None)


def main():
    bad = []
    with open(os.path.join(TESTS, "run_tests.sh")) as f:
        run_tests = "\n".join(l for l in f.read().splitlines() if not l.lstrip().startswith("#"))
    for d, dirs, files in os.walk(TESTS):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for name in sorted(files):
            if not re.match(r"test_\w+\.(c|py|sh)$", name):
                continue
            up, ok = d, False
            while not ok and up.startswith(TESTS):
                cm = os.path.join(up, "CMakeLists.txt")
                ok = os.path.exists(cm) and named(name, open(cm).read())
                up = os.path.dirname(up)
            rel = os.path.relpath(os.path.join(d, name), ROOT)
            ok = ok or re.search(r"(^|\s)(bash\s+)?%s(\s|$)" % re.escape(rel), run_tests, re.M) is not None
            if not ok:
                bad.append(os.path.relpath(os.path.join(d, name), ROOT))
    for b in bad:
        print("FAIL: %s: no CMakeLists.txt of its folder or above names it, nor does tests/run_tests.sh run it: it never runs" % b,
              file=sys.stderr)
    print("%d test file(s) unregistered" % len(bad) if bad else "every test file is registered")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
