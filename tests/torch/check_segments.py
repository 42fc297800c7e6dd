#!/usr/bin/env python3
"""PyTorch's segments and the blocks in them as gpuprof lays them out
(`gpuprof analyze --at`, the report's segment view) against PyTorch's own
snapshot of them (torch.cuda.memory._snapshot()), taken by
segments_snapshot.py under `gpuprof --trace`, with PyTorch's default
allocator and with expandable segments. Prints RESULT rows; exit 1 when
one failed.

  default     gpuprof's segments are PyTorch's: the same addresses and
              sizes, the same bytes in blocks; the blocks PyTorch calls
              active_allocated at the same addresses, of the same sizes
  expandable  gpuprof's runs of mapped pages hold what PyTorch's segments
              hold (their sizes summed: reserved), the same active blocks
              at the same addresses; both lists printed

The time asked of analyze --at: a nanosecond before the marker block the
program allocates right after its snapshot.

usage: check_segments.py GPUPROF OUT"""
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from result_rows import Rows  # noqa: E402

GP, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(OUT, exist_ok=True)
row = Rows("segments")


def marker_t(trace, mark_bytes):
    """The marker's torch.alloc (asked for mark_bytes; its block may be
    larger, a free one PyTorch did not split): its time in analyze's
    seconds (one trace: its ts, microseconds from the trace's own base)."""
    with gzip.open(trace, "rt") as f:
        for line in f:
            if '"torch.alloc"' in line and str(mark_bytes) in line:
                e = json.loads(line.strip().rstrip(","))
                if e["args"].get("requested", e["args"].get("bytes")) == mark_bytes:
                    return e["ts"] / 1e6
    return None


for case, conf in (("default", None), ("expandable", "expandable_segments:True")):
    trace, snap_path = os.path.join(OUT, "segments-%s.json.gz" % case), os.path.join(OUT, "segments-%s.snapshot.json" % case)
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    p = subprocess.run([GP, "--trace", "--force", "-o", trace, sys.executable, os.path.join(HERE, "segments_snapshot.py"),
                        snap_path], capture_output=True, text=True, timeout=400, env=env)
    with open(os.path.join(OUT, "segments-%s.log" % case), "w") as f:
        f.write(p.stdout + "\n--- stderr\n" + p.stderr)
    if p.returncode != 0 or not os.path.exists(snap_path):
        row(case, False, "the traced program: exit %d: %s" % (p.returncode, p.stderr.strip()[-300:]))
        continue
    snap = json.load(open(snap_path))
    t = marker_t(trace, snap["mark_bytes"])
    if t is None:
        row(case, False, "no torch.alloc of the marker's %d bytes in the trace" % snap["mark_bytes"])
        continue
    q = subprocess.run([GP, "analyze", "--json", "--at", "%.9f" % (t - 1e-9), trace], capture_output=True, text=True)
    at = (json.loads(q.stdout or "{}").get("devices") or [{}])[0].get("at") or {}
    segs = at.get("segments")
    if segs is None:
        row(case, False, "analyze --at %.9f: no segments (%s)" % (t - 1e-9, q.stderr.strip()[-200:]))
        continue
    theirs = sorted((s["address"], s["total_size"], s["allocated_size"]) for s in snap["segments"])
    ours = sorted((int(g["addr"], 16), g["bytes"], g["used"]) for g in segs)
    their_blocks = sorted((b[0], b[1]) for s in snap["segments"] for b in s["blocks"] if b[2] == "active_allocated")
    our_blocks = sorted((int(g["addr"], 16) + b[0], b[1]) for g in segs for b in (g["blocks"] or []))
    pending = sum(1 for s in snap["segments"] for b in s["blocks"] if b[2] == "active_pending_free")
    blocks_same = our_blocks == their_blocks and all(g["blocks"] is not None for g in segs)
    reserved_same = sum(x[1] for x in ours) == sum(x[1] for x in theirs) == snap["reserved"] == at.get("reserved")
    listed = "PyTorch's %d segments %s; gpuprof's %d %s" % (
        len(theirs), [(hex(a), n, u) for a, n, u in theirs][:12], len(ours), [(hex(a), n, u) for a, n, u in ours][:12])
    if case == "default":
        row(case + ".segments", ours == theirs and reserved_same,
            "at %.6f s, reserved %s (PyTorch %d): %s" % (t, at.get("reserved"), snap["reserved"], listed))
    else:
        row(case + ".reserved", reserved_same and all(s["is_expandable"] for s in snap["segments"]),
            "at %.6f s, reserved %s (PyTorch %d), every PyTorch segment expandable: %s" % (
                t, at.get("reserved"), snap["reserved"], listed))
    row(case + ".blocks", blocks_same,
        "%d blocks PyTorch calls active_allocated (%d pending free), gpuprof's %d, the same addresses and sizes: %s" % (
            len(their_blocks), pending, len(our_blocks), our_blocks == their_blocks))

sys.exit(row.exit_status())
