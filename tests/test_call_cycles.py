#!/usr/bin/env python3
"""check_call_cycles.py on small made-up builds: it finds a cycle of two
files through their objects, one through a header's static inline
function, one across two folders, and passes a graph without one; a
pipeline's stages used out of order, by a call or an #include.

  test_call_cycles.py     CC and NM name the compiler and nm (cc, nm)"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_call_cycles.py")
CC = os.environ.get("CC", "cc")
MADE = []  # the made-up trees, removed at the end


def build(files):
    """A source tree and a CMake-like build of it: {path: C text}. The
    build's directory."""
    top = tempfile.mkdtemp(prefix="gpuprof-cycles.")
    MADE.append(top)
    src, out = os.path.join(top, "src"), os.path.join(top, "build")
    for path, text in files.items():
        p = os.path.join(src, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    for path in files:
        if not path.endswith(".c"):
            continue
        folder, name = os.path.split(path)
        obj = os.path.join(out, folder, "CMakeFiles", "lib.dir", name + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        # every folder's headers by their names, as CMake's include
        # directories give them
        incs = ["-I" + os.path.join(src, d)
                for d in sorted({os.path.dirname(h) for h in files if h.endswith(".h")} | {folder})]
        subprocess.run([CC, "-c", "-O2"] + incs + ["-o", obj,
                        os.path.join(src, path)], check=True)
    with open(os.path.join(out, "CMakeCache.txt"), "w") as f:
        f.write("CMAKE_HOME_DIRECTORY:INTERNAL=%s\n" % src)
    return out


def check(out, *folders):
    r = subprocess.run([sys.executable, CHECK, out] + list(folders), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


FAILED = []


def expect(what, cond, text):
    if not cond:
        FAILED.append(what)
        print("FAIL: %s\n%s" % (what, text), file=sys.stderr)


def test_two_files():
    out = build({
        "lib/a.c": "int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n",
        "lib/b.c": "int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n",
        "lib/c.c": "int a(int);\nint c(void) { return a(3); }\n",
    })
    rc, text = check(out, "lib")
    expect("a cycle of two files fails", rc == 1, text)
    expect("it names both", "lib/a.c -> lib/b.c (b)" in text and "lib/b.c -> lib/a.c (a)" in text,
           text)
    expect("a file that only calls into it is not in it", "lib/c.c ->" not in text, text)


def test_data():
    out = build({
        "lib/a.c": "extern int count;\nint a(void) { return count; }\n",
        "lib/b.c": "int a(void);\nint count = 1;\nint b(void) { return a(); }\n",
    })
    rc, text = check(out, "lib")
    expect("a variable read back is a cycle too", rc == 1 and "(count)" in text, text)


def test_inline():
    out = build({
        "lib/h.h": "int h_size(void);\nstatic inline int\nh_twice(int x)\n{\n\treturn 2 * x;\n}\n",
        "lib/h.c": "#include \"h.h\"\nint a(void);\nint h_size(void) { return a(); }\n",
        "lib/a.c": "#include \"h.h\"\n/* h_size() in a comment is no call */\n"
                   "int a(void) { return h_twice(2); }\n",
    })
    rc, text = check(out, "lib")
    expect("a call of a header's inline function is an edge to its .c", rc == 1 and
           "lib/a.c -> lib/h.c (h_twice (inline))" in text, text)


def test_folders():
    out = build({
        "low/a.c": "int b(void);\nint a(void) { return b(); }\n",
        "high/b.c": "int a(void);\nint c(void) { return 1; }\nint b(void) { return c(); }\n"
                    "int d(void) { return a(); }\n",
    })
    rc, text = check(out, "low")
    expect("one folder alone: no cycle", rc == 0, text)
    rc, text = check(out, "low", "high")
    expect("folders together: the cycle through both", rc == 1 and "low/a.c -> high/b.c" in text,
           text)


def test_stages():
    good = {
        "p/api.h": "int run(void);\n",
        "p/run.c": "#include \"api.h\"\nint m(void);\nint run(void) { return m(); }\n",
        "p/read/r.c": "#include \"api.h\"\nint r(void) { return 1; }\n",
        "p/model/m.h": "int m(void);\n",
        "p/model/m.c": "int r(void);\nint m(void) { return r(); }\n",
    }
    rc, text = check(build(good), "p=read,model")
    expect("stages used in order, the pipeline on top: passes", rc == 0 and
           "0 use(s) of a later stage" in text, text)
    rc, text = check(build(dict(good, **{"p/read/bad.c": "int m(void);\nint bad(void) { return m(); }\n"})),
                     "p=read,model")
    expect("an earlier stage calling a later one fails", rc == 1 and
           "p/read/bad.c (stage read) uses p/model/m.c (stage model): m" in text, text)
    rc, text = check(build(dict(good, **{"p/read/inc.c": "#include \"m.h\"\nint inc(void) { return 0; }\n"})),
                     "p=read,model")
    expect("an earlier stage including a later one's header fails", rc == 1 and
           "p/read/inc.c (stage read) includes p/model/m.h (stage model)" in text, text)
    rc, text = check(build(dict(good, **{"p/model/up.c": "int run(void);\nint up(void) { return run(); }\n"})),
                     "p=read,model")
    expect("a stage calling the pipeline fails", rc == 1 and
           "p/model/up.c (stage model) uses p/run.c (stage pipeline): run" in text, text)
    rc, text = check(build(good), "p=read,nosuch")
    expect("a stage that is no subfolder is bad", rc != 0, text)


def test_none():
    out = build({
        "lib/a.c": "int b(int);\nint a(int x) { return b(x); }\n",
        "lib/b.c": "int b(int x) { return x + 1; }\n",
    })
    rc, text = check(out, "lib")
    expect("no cycle passes", rc == 0 and "0 call cycle(s) among 2 files" in text, text)
    rc, text = check(out, "none")
    expect("a folder with no objects is bad use, not a pass", rc == 2, text)


if __name__ == "__main__":
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
    for top in MADE:
        shutil.rmtree(top, ignore_errors=True)
    print("%d check(s) failed" % len(FAILED) if FAILED else "check_call_cycles.py: all good")
    sys.exit(1 if FAILED else 0)
