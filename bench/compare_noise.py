#!/usr/bin/env python3
"""How much the peaks of repeated runs of one program differ: the noise a
`gpuprof compare --max-increase` must stay above (issue 5, item 4).

  compare_noise.py [--gpuprof GPUPROF] RUN RUN [RUN...]

Each RUN is one run of the same program: a trace (analyzed with
`GPUPROF analyze --json`) or a `gpuprof analyze --json` summary (for a
run of several processes, a summary of all its traces). Processes are
matched across runs the way compare matches them: by device index and
command line, in the order they started.

Prints a Markdown table for bench/RESULTS.md: per GPU and metric (the
--metric choices of compare, and all device memory of the process) the
runs, min, max, max - min and that as a percentage of min; then the
largest spread. Exit 0; 2 on bad input.

On a machine with an NVIDIA GPU, for example:
  for i in 1 2 3 4 5; do
    gpuprof --trace -o gpt2.tensor.r$i.json.gz tests/torch/train_models.py --model gpt2 --steps 5
  done
  python3 bench/compare_noise.py gpt2.tensor.r*.json.gz
(with --mode native for native mode; resnet50 likewise).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

METRICS = (
    ("peak allocated", lambda d: d["summary"]["allocated"]["peak"] if d["summary"]["allocated"]["known"] else None),
    ("peak reserved", lambda d: d["summary"]["reserved"]["peak"] if d["summary"]["reserved"]["known"] else None),
    ("device total", lambda d: d["summary"]["device_total"]["peak"]),
)


def fmt_bytes(v):
    """As gpuprof prints sizes (viewer/analyze/result/units.h)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    d, u = float(v), 0
    while d >= 1024.0 and u + 1 < len(units):
        d /= 1024.0
        u += 1
    if u == 0:
        return "%d B" % v
    if d < 10:
        return "%.2f %s" % (d, units[u])
    if d < 100:
        return "%.1f %s" % (d, units[u])
    return "%.0f %s" % (d, units[u])


def load(gpuprof, path):
    with open(path, "rb") as f:
        head = f.read(4096)
    if head[:2] != b"\x1f\x8b" and head.lstrip()[:1] == b"{":
        with open(path) as f:
            doc = json.load(f)
    else:
        p = subprocess.run([gpuprof, "analyze", "--json", path], capture_output=True, text=True)
        if p.returncode:
            raise SystemExit("compare_noise.py: %s: %s" % (path, p.stderr.strip()))
        doc = json.loads(p.stdout)
    if doc.get("schema") != "gpuprof.analyze/1":
        raise SystemExit("compare_noise.py: %s: not a gpuprof.analyze/1 summary" % path)
    return doc


def units(doc):
    """{(device, cmdline, k): device entry}: k counts the processes with
    the same device and command, in the order they started."""
    traces = doc["traces"]
    devs = sorted(doc["devices"], key=lambda d: (traces[d["trace"]]["start_unix_ns"] or 0, d["pid"], d["device"]))
    seen, out = {}, {}
    for d in devs:
        cmd = traces[d["trace"]]["cmdline"]
        k = seen.get((d["device"], cmd), 0)
        seen[(d["device"], cmd)] = k + 1
        out[(d["device"], cmd, k)] = d
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpuprof", default=shutil.which("gpuprof") or "build/release/viewer/gpuprof")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    if len(a.runs) < 2:
        print("compare_noise.py: give two runs or more", file=sys.stderr)
        return 2
    runs = [units(load(a.gpuprof, p)) for p in a.runs]
    keys = sorted(set().union(*runs), key=lambda k: (k[0], k[1] or "", k[2]))
    several = len({(k[1], k[2]) for k in keys}) > 1
    print("| GPU | metric | runs | min | max | max − min | of min | max − min (bytes) |")
    print("|:--|:--|--:|--:|--:|--:|--:|--:|")
    worst = None
    for key in keys:
        have = [r[key] for r in runs if key in r]
        if len(have) < len(runs):
            print("compare_noise.py: cuda:%d (%s) is in %d of %d runs" % (key[0], key[1], len(have), len(runs)),
                  file=sys.stderr)
        where = "cuda:%d" % key[0] + (" `%s` #%d" % (key[1], key[2] + 1) if several else "")
        for name, get in METRICS:
            vals = [get(d) for d in have]
            if len(vals) < 2 or any(v is None for v in vals):
                continue
            lo, hi = min(vals), max(vals)
            pct = 100.0 * (hi - lo) / lo if lo else 0.0
            print("| %s | %s | %d | %s | %s | %s | %.3f%% | %d |"
                  % (where, name, len(vals), fmt_bytes(lo), fmt_bytes(hi), fmt_bytes(hi - lo), pct, hi - lo))
            if worst is None or pct > worst[0]:
                worst = (pct, hi - lo, where, name)
    if worst is None:
        print("compare_noise.py: no GPU is in two runs", file=sys.stderr)
        return 2
    print("\nLargest spread: %.3f%% (%s, %d bytes), %s on %s: a `gpuprof compare --max-increase` "
          "at or below that would have failed two of these runs of one program."
          % (worst[0], fmt_bytes(worst[1]), worst[1], worst[3], worst[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
