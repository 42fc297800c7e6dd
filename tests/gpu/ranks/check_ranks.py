#!/usr/bin/env python3
"""gpuprof --trace -- torchrun --nproc-per-node 2 two_ranks.py: one trace per
rank, each knowing its rank, local rank, world size, host and the job's
start (the same in all), and each rank's peaks equal to what PyTorch
measured in that rank. Prints RESULT rows.

usage: check_ranks.py GPUPROF OUT"""
import glob
import json
import os
import subprocess
import sys

GP, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(OUT, exist_ok=True)
trace = os.path.join(OUT, "ranks.json.gz")
for old in glob.glob(os.path.join(OUT, "ranks.*json.gz")):
    os.unlink(old)
p = subprocess.run([GP, "--trace", "--force", "-o", trace, "--", sys.executable, "-m", "torch.distributed.run",
                    "--nproc-per-node", "2", os.path.join(HERE, "two_ranks.py")],
                   capture_output=True, text=True, timeout=300)
printed = {}
for line in p.stdout.splitlines():
    if line.startswith("rank "):
        w = line.split()
        printed[int(w[1])] = {"local": int(w[3]), "world": int(w[5]),
                              "allocated": int(w[6].split("=")[1]), "reserved": int(w[7].split("=")[1])}
traces = sorted(t for t in glob.glob(os.path.join(OUT, "ranks.*.json.gz")))
failed = 0


def row(case, ok, what):
    global failed
    failed += not ok
    print("RESULT ranks.%s %s %s" % (case, "PASS" if ok else "FAIL", what), flush=True)


row("run", p.returncode == 0 and len(printed) == 2 and len(traces) >= 2,
    "exit %d; ranks printed %s; traces of workers %d%s" % (
        p.returncode, sorted(printed), len(traces), "" if p.returncode == 0 else ": " + p.stderr[-300:]))
doc = json.loads(subprocess.run([GP, "analyze", "--json"] + traces, capture_output=True, text=True).stdout or "{}")
by_rank = {}
for t in doc.get("traces", []):
    if t.get("rank") is not None:
        by_rank[t["rank"]] = t
starts = {t.get("job_start_unix_ns") for t in by_rank.values()}
row("identity", sorted(by_rank) == [0, 1] and all(
    t["world_size"] == 2 and t["local_world_size"] == 2 and t["local_rank"] == r and t["hostname"]
    for r, t in by_rank.items()) and len(starts) == 1 and None not in starts,
    "; ".join("rank %s: local %s, world %s, local world %s, host %s, job start %s" % (
        r, t.get("local_rank"), t.get("world_size"), t.get("local_world_size"), t.get("hostname"),
        t.get("job_start_unix_ns")) for r, t in sorted(by_rank.items())))
for r in sorted(printed):
    t = by_rank.get(r)
    devs = [d for d in doc.get("devices", []) if t and d["pid"] == t["pid"]]
    if not devs:
        row("peak.rank%d" % r, False, "no device of rank %d in the traces" % r)
        continue
    s = devs[0]["summary"]
    got_a, got_r = s["allocated"]["peak"], s["reserved"]["peak"]
    row("peak.rank%d" % r, got_a == printed[r]["allocated"] and got_r == printed[r]["reserved"],
        "allocated peak %s (PyTorch %d), reserved peak %s (PyTorch %d)" % (
            got_a, printed[r]["allocated"], got_r, printed[r]["reserved"]))
sys.exit(1 if failed else 0)
