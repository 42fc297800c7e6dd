#!/usr/bin/env python3
"""tests/driver_tests.cmake on a made-up driver, in a scratch CMake project:
each test_* function becomes a CTest test PREFIX+NAME running DRIVER ARGS
NAME AFTER, labelled with LABELS and its @labels(...); a function added to
the driver is a test after the next build (the driver re-runs the
configure); a driver that cannot list its tests fails the configure, saying
so.

  test_driver_tests.py CMAKE CTEST     exit 0 when all holds, 1 otherwise"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYZE = os.path.join(HERE, "analyze")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


DRIVER = '''import os, sys
sys.path.insert(0, %r)
import checks
from checks import labels


def test_one():
    pass


@labels("browser", "slow")
def test_two():
    pass


def helper():
    pass
%s

if __name__ == "__main__":
    sys.exit(checks.main(globals(), "scratch."))
'''

PROJECT = '''cmake_minimum_required(VERSION 3.24)
project(scratch NONE)
find_package(Python3 COMPONENTS Interpreter REQUIRED)
include("%s")
enable_testing()
gpuprof_driver_tests(PREFIX made. DRIVER ${CMAKE_CURRENT_SOURCE_DIR}/driver.py
  ARGS first AFTER --last LABELS made PROPERTIES TIMEOUT 7)
'''


def write_driver(d, extra=""):
    with open(os.path.join(d, "driver.py"), "w") as f:
        f.write(DRIVER % (ANALYZE, extra))


def tests_of(ctest, build):
    p = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True)
    if not check(p.returncode == 0, "ctest --show-only: %s" % p.stderr.strip()):
        return {}
    out = {}
    for t in json.loads(p.stdout)["tests"]:
        props = {x["name"]: x["value"] for x in t.get("properties", [])}
        out[t["name"]] = (t.get("command"), props.get("LABELS"), props.get("TIMEOUT"))
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    cmake, ctest = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="gpuprof-driver-tests.")
    try:
        src, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
        os.makedirs(src)
        write_driver(src)
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write(PROJECT % os.path.join(HERE, "driver_tests.cmake"))
        p = subprocess.run([cmake, "-S", src, "-B", build], capture_output=True, text=True)
        if not check(p.returncode == 0, "configure: %s" % p.stderr.strip()):
            return 1
        got = tests_of(ctest, build)
        check(sorted(got) == ["made.one", "made.two"], "the driver's two tests, no helper: %s" % sorted(got))
        one, two = got.get("made.one"), got.get("made.two")
        if one and two:
            check(one[0][1:] == [os.path.join(src, "driver.py"), "first", "one", "--last"],
                  "made.one runs DRIVER ARGS NAME AFTER: %s" % one[0])
            check(one[1] == ["made"] and sorted(two[1]) == ["browser", "made", "slow"],
                  "labels: the folder's and the driver's: %s, %s" % (one[1], two[1]))
            check(one[2] == 7 and two[2] == 7, "the properties given: %s %s" % (one[2], two[2]))
        check(not os.path.exists(os.path.join(src, "__pycache__")), "no __pycache__ left in the sources")
        # a test added to the driver: the build re-runs the configure
        write_driver(src, "\n\ndef test_three():\n    pass\n")
        p = subprocess.run([cmake, "--build", build], capture_output=True, text=True)
        check(p.returncode == 0, "build after the driver changed: %s" % p.stderr.strip())
        check("made.three" in tests_of(ctest, build), "a test function added is registered by the next build")
        # a driver that cannot list: the configure fails, naming it
        with open(os.path.join(src, "driver.py"), "a") as f:
            f.write("\ndef (:\n")
        p = subprocess.run([cmake, "-S", src, "-B", build], capture_output=True, text=True)
        check(p.returncode != 0 and "driver.py --list failed" in " ".join(p.stderr.split()),
              "a broken driver fails the configure: exit %d, %r" % (p.returncode, p.stderr[-300:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
