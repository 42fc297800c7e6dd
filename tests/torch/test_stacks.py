#!/usr/bin/env python3
"""--stacks' frame reader (profiler/python/gpuprof_stacks.c) on this Python:
the calling thread's stack read with the GIL released, as PyTorch's
allocator calls gpuprof's hook. Checks file, line and function of every
frame, that one stack gets one id (the same line reached twice, from another
instruction of it too), that another caller or thread gets another, the
cut of a deep stack, generators, a refused stack (no id, tried again), and
a thread with no Python frames. Needs the stacks_probe module built beside
it (tests/torch/CMakeLists.txt); skipped (77) where this Python cannot be
read (then the module says why)."""
import os
import sys
import threading

import stacks_probe as sp

if hasattr(sp, "unsupported"):
    print("SKIP: %s" % sp.unsupported)
    sys.exit(77)

HERE = os.path.abspath(__file__)
fails = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        fails.append(what)


def frames(sid):
    t = sp.text(sid)
    assert t is not None and t.endswith("\x1e"), repr(t)
    return [tuple(f.split("\x1f")) for f in t[:-1].split("\x1e")]


def line_of(tag):
    for i, ln in enumerate(open(HERE, encoding="utf-8"), 1):
        if ln.rstrip().endswith("# " + tag):
            return str(i)
    raise KeyError(tag)


def inner():
    return sp.current()  # L_INNER


def outer():
    return inner()  # L_OUTER


def outer_twice():
    return inner(), sp.current()  # L_TWICE


a, b = outer(), outer()  # L_TWO
# one line, two instructions: one stack (the text); a loop's calls, one
# instruction: found by the walk itself
loop = [outer() for _ in range(3)]
f = frames(a)
check(a > 0 and a == b, "one stack, one id (%d, %d)" % (a, b))
check(len(set(loop)) == 1 and loop[0] != a, "a loop's calls: one stack (%r)" % (loop,))
check(f[0] == (HERE, line_of("L_INNER"), "inner"), "innermost frame %r" % (f[0],))
check(f[1] == (HERE, line_of("L_OUTER"), "outer"), "its caller %r" % (f[1],))
check(f[-1] == (HERE, line_of("L_TWO"), "<module>") and len(f) == 3,
      "outermost frame, 3 in all: %r" % (f,))
x, y = outer_twice()
check(x != a and frames(x)[1][1] == line_of("L_TWICE"), "another caller, another stack")
check(frames(y)[0] == (HERE, line_of("L_TWICE"), "outer_twice"), "the second call of the line")
check(sp.current_with_gil() == sp.current_with_gil(), "with the GIL held: the same")


def deep(n):
    return sp.current() if n == 0 else deep(n - 1)  # L_DEEP


d = frames(deep(300))
cut = [fr for fr in d if fr[0] == "..."]
check(len(d) == 96 + 1 + 32, "a deep stack keeps 96 + 32 frames and a marker (%d)" % len(d))
check(len(cut) == 1 and cut[0][1] == "0" and cut[0][2] == "%d frames left out" % (302 - 128),
      "the marker says what was left out: %r" % (cut,))
check(d[0][2] == "deep" and d[-1][2] == "<module>", "innermost and outermost kept")

g = (sp.current() for _ in range(1))
check(frames(next(g))[0][2] == "<genexpr>", "a generator's frame")

res = []
t = threading.Thread(target=lambda: res.append(outer()))
t.start()
t.join()
tf = frames(res[0])
check(res[0] not in (0, a) and tf[0][2] == "inner" and any("threading" in fr[0] for fr in tf),
      "another thread: its own stack, threading's frames outermost")

sp.refuse(True)
r1 = (lambda: sp.current())()  # a new stack while the recorder refuses
sp.refuse(False)
check(r1 == 0, "a refused stack gets no id (%d)" % r1)
r2 = (lambda: sp.current())()
check(r2 > 0, "and is handed over again later (%d)" % r2)

c = sp.counts()
check(c["stacks"] >= 6 and c["dropped"] == 1 and c["lookups"] > c["new_keys"], "counts %r" % (c,))
if fails:
    print("%d failed" % len(fails))
    sys.exit(1)
print("all passed")
