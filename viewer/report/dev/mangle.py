#!/usr/bin/env python3
"""Damage a report's data at random, to check that the page copes with any
member null, absent or of another type, and with hostile strings: each
section must still draw or say what failed, with no uncaught error.

  mangle.py IN OUT.json [--seed N] [--rate R]

IN is what build_page.py reads (a page, a gpuprof.report/1 or an analyze
document); OUT is a gpuprof.report/1 document to give build_page.py."""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_page  # noqa: E402  (reads every input form)

HOSTILE = ["</script><img src=x onerror=alert(1)>", "\u202eevil\u2066", "\x1b[2J\x07", "\u009b31m", "\ud800",
           "line\u2028sep", "", " " * 3, "a" * 3000]
ODD = [None, 0, -1, 1e300, "12", [], {}, True, HOSTILE[0], [None], {"x": None}]


def mangle(value, rng, rate, depth=0):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            r = rng.random()
            if r < rate / 3:
                continue  # absent
            out[k] = rng.choice(ODD) if r < rate else mangle(v, rng, rate, depth + 1)
        return out
    if isinstance(value, list):
        items = [mangle(v, rng, rate, depth + 1) for v in value]
        if items and rng.random() < rate:
            items.insert(rng.randrange(len(items)), rng.choice(ODD))
        return items
    if isinstance(value, str) and rng.random() < rate:
        return rng.choice(HOSTILE) + value
    return value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", type=float, default=0.05)
    a = ap.parse_args()
    doc = build_page.load_doc(a.input)
    rng = random.Random(a.seed)
    doc = {"schema": doc.get("schema"), "generator": doc.get("generator"), "inputs": doc.get("inputs"),
           "run": mangle(doc.get("run"), rng, a.rate), "base": mangle(doc.get("base"), rng, a.rate),
           "compare": mangle(doc.get("compare"), rng, a.rate)}
    with open(a.output, "w", encoding="utf-8") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
