#!/usr/bin/env python3
"""The recorder reads its environment in one file: of a library's object
files, only ONLY's may use getenv, secure_getenv or environ (nm's
undefined symbols), so that its configuration is read once, into one
struct (profiler/config.h), and nothing else reads a variable behind it.

  check_getenv.py [--nm NM] ONLY PATH...

ONLY: the source file allowed (config.c); PATH: object files, or folders
searched for *.o. Exit 0 when only ONLY reads the environment, 1
otherwise, 2 when an object cannot be read."""
import argparse
import os
import subprocess
import sys

READERS = {"getenv", "secure_getenv", "__secure_getenv", "environ", "__environ"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nm", default="nm")
    ap.add_argument("only")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    objs = []
    for p in args.paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                objs += [os.path.join(d, n) for n in names if n.endswith(".o")]
        else:
            objs.append(p)
    bad, seen_only = [], False
    for o in sorted(objs):
        r = subprocess.run([args.nm, "-u", o], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write("check_getenv: %s: %s" % (o, r.stderr))
            return 2
        src = os.path.basename(o)[:-2]
        used = sorted({l.split()[-1] for l in r.stdout.splitlines() if l.strip()} & READERS)
        if src == args.only:
            seen_only = True
        elif used:
            bad.append("check_getenv: %s reads the environment (%s); only %s may"
                       % (src, ", ".join(used), args.only))
    if not seen_only:
        bad.append("check_getenv: no object of %s among %d" % (args.only, len(objs)))
    for b in bad:
        print(b)
    print("check_getenv: %d objects, %s" % (len(objs), "FAILED" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
