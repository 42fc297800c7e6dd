"""What the CPU test drivers of gpuprof's commands share (test_analyze.py,
tests/compare/test_compare.py): checks that collect failures instead of
stopping at the first, and the entry point that runs one named test.

  DRIVER.py GPUPROF TEST   runs test_TEST() of the driver with GP and TMP set
  DRIVER.py --list         the driver's tests, one a line: TEST [LABEL...]
                           (CTest's, registered from it: tests/driver_tests.cmake)
"""
import os
import shutil
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: %s" % what, file=sys.stderr)
    return cond


def eq(got, want, what):
    return check(got == want, "%s: got %r, expected %r" % (what, got, want))


def report():
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


def labels(*names):
    """A test's CTest labels, beside those of its folder: @labels("browser")."""
    def mark(fn):
        fn.ctest_labels = names
        return fn
    return mark


def list_tests(driver):
    """Prints the driver's tests (its test_* functions, in the order they
    are defined, without the prefix), each with its labels; returns 0."""
    for name, fn in list(driver.items()):
        if name.startswith("test_") and callable(fn):
            print(" ".join((name[len("test_"):],) + tuple(getattr(fn, "ctest_labels", ()))))
    return 0


def main(driver, prefix):
    """driver: the test module's globals(); sets its GP (the gpuprof
    binary) and TMP (a temporary directory, removed after the test)."""
    if sys.argv[1:] == ["--list"]:
        return list_tests(driver)
    if len(sys.argv) < 3:
        raise SystemExit(driver["__doc__"])
    driver["GP"] = os.path.abspath(sys.argv[1])
    fn = driver.get("test_" + sys.argv[2])
    if not fn:
        raise SystemExit("unknown test %s" % sys.argv[2])
    driver["TMP"] = tempfile.mkdtemp(prefix=prefix)
    try:
        fn()
    finally:
        shutil.rmtree(driver["TMP"], ignore_errors=True)
    return report()
