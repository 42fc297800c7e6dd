#!/usr/bin/env python3
"""No call cycle among a library's source files: file X calls a function
defined in file Y (an undefined symbol of X.o that Y.o defines, read with
nm), and no chain of such calls leads from a file back to itself. With
--data, using a global variable counts as a call.

  check_call_cycles.py [--data] [--nm NM] PATH...

PATH: object files, or folders searched for *.o. Exit 0 when the files
form no cycle; 1, each cycle printed with the symbols on its edges,
otherwise; 2 when an object cannot be read."""
import argparse
import os
import subprocess
import sys

FUNCTIONS = set("TWi")
DATA = set("DBRVGSC")


def objects(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                out += [os.path.join(d, n) for n in names if n.endswith(".o")]
        else:
            out.append(p)
    return sorted(out)


def node(path):
    """The source file an object was compiled from: CMake names it
    <source>.o (writer_thread.c.o), other builds <stem>.o."""
    name = os.path.basename(path)
    return name[:-2] if name.endswith(".o") else name


def symbols(nm, path):
    r = subprocess.run([nm, path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("check_call_cycles: %s: %s" % (path, r.stderr))
        sys.exit(2)
    defined, undefined = {}, set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            undefined.add(f[1])
        elif len(f) == 3:
            defined[f[2]] = f[1]
    return defined, undefined


def cycles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", action="store_true", help="a global variable used counts too")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    kinds = FUNCTIONS | (DATA if args.data else set())

    owner, needs = {}, {}
    for o in objects(args.paths):
        defined, undefined = symbols(args.nm, o)
        v = node(o)
        needs.setdefault(v, set()).update(undefined)
        for sym, kind in defined.items():
            if kind in kinds:
                owner[sym] = v
    if not needs:
        sys.stderr.write("check_call_cycles: no object files in %s\n" % " ".join(args.paths))
        return 2
    edges, why = {}, {}
    for v, syms in needs.items():
        for s in syms:
            w = owner.get(s)
            if w and w != v:
                edges.setdefault(v, set()).add(w)
                why.setdefault((v, w), []).append(s)
    found = cycles(edges)
    for comp in found:
        print("check_call_cycles: these files call each other in a circle: %s" % ", ".join(comp))
        for v in comp:
            for w in sorted(edges.get(v, ())):
                if w in comp:
                    print("  %s -> %s: %s" % (v, w, ", ".join(sorted(why[(v, w)]))))
    print("check_call_cycles: %d files, %d calls between them, %s"
          % (len(needs), sum(len(e) for e in edges.values()),
             "%d cycle(s)" % len(found) if found else "no cycle"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
