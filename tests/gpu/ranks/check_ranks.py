#!/usr/bin/env python3
"""Multi-rank jobs traced into run directories, checked against what PyTorch
measured in each rank. Prints RESULT rows; exit 1 when one failed.

  toy    torchrun, 2 ranks (tests/gpu/ranks/two_ranks.py): one trace per rank in
         the run directory, the manifest, each rank's identity and the job's
         start; peaks = PyTorch's; analyze's ranks: the larger rank first out
  ddp    GPT-2 small, DDP, 2 ranks (train_gpt2.py): peaks = PyTorch's
  fsdp2  GPT-2 small, FSDP2, 2 ranks: peaks = PyTorch's; the parameters and
         optimizer state at the peak are this rank's shards
         (ddp, fsdp2: with NCCL, the collectives analyze counts are the NCCL
         kernels in each trace, their ops named; with gloo, none)
  nccl   one rank with NCCL: NCCL's device memory named, not PyTorch's
  merge  the run directories merged into one Perfetto trace: valid, a
         process group per rank
With one GPU the ranks share it over gloo (NCCL refuses two ranks on a GPU);
with two GPUs or more, NCCL.

usage: check_ranks.py GPUPROF OUT [CASE...]"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys

GP, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
CASES = sys.argv[3:] or ["toy", "ddp", "fsdp2", "nccl", "merge"]
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(OUT, exist_ok=True)
failed = 0


def row(case, ok, what):
    global failed
    failed += not ok
    print("RESULT ranks.%s %s %s" % (case, "PASS" if ok else "FAIL", what), flush=True)


def traced(name, nproc, script, *args):
    """gpuprof --trace -o OUT/name/ -- torchrun ...: (process, {rank: printed})"""
    run = os.path.join(OUT, name)
    shutil.rmtree(run, ignore_errors=True)
    p = subprocess.run([GP, "--trace", "-o", run + "/", "--", sys.executable, "-m", "torch.distributed.run",
                        "--nproc-per-node", str(nproc), os.path.join(HERE, script)] + list(args),
                       capture_output=True, text=True, timeout=400)
    with open(run + ".log", "w") as f:
        f.write(p.stdout + "\n--- stderr\n" + p.stderr)
    printed = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if w and w[0] in ("rank", "RANK"):
            d = {"local": int(w[3]), "world": int(w[5])}
            d.update((k, int(v) if v.isdigit() else v) for k, v in (x.split("=") for x in w[6:]))
            printed[int(w[1])] = d
    return run, p, printed


def analyze(run):
    p = subprocess.run([GP, "analyze", "--json", run], capture_output=True, text=True)
    with open(run + ".analyze.txt", "w") as f:  # kept for the logs
        f.write(subprocess.run([GP, "analyze", run], capture_output=True, text=True).stdout)
    return json.loads(p.stdout or "{}"), p.stderr


def rank_devices(doc):
    pid_rank = {t["pid"]: t["rank"] for t in doc.get("traces", []) if t.get("rank") is not None}
    return {pid_rank[d["pid"]]: d for d in doc.get("devices", []) if d["pid"] in pid_rank}


def check_peaks(case, doc, printed):
    devs = rank_devices(doc)
    for r in sorted(printed):
        d = devs.get(r)
        if not d:
            row("%s.peak.rank%d" % (case, r), False, "no device of rank %d" % r)
            continue
        s = d["summary"]
        got_a, got_r = s["allocated"]["peak"], s["reserved"]["peak"]
        row("%s.peak.rank%d" % (case, r),
            got_a == printed[r]["max_allocated"] and got_r == printed[r]["max_reserved"],
            "allocated peak %s (PyTorch %d), reserved peak %s (PyTorch %d)" % (
                got_a, printed[r]["max_allocated"], got_r, printed[r]["max_reserved"]))
    return devs


def peak_cats(d):
    return {c["category"]: c for c in (d.get("peak") or {}).get("by_category") or []}


def trace_collectives(run, pid):
    """NCCL's kernels in the trace of process pid, read from the file itself:
    {op: count}, op as the kernel's name says it (ncclDevKernel_AllGather_RING_LL:
    AllGather; ncclDevKernel_Generic_1: Generic); and the ops of NCCL's NVTX
    ranges of its calls (ncclAllGather: AllGather), which name the kernels
    they launch."""
    ops, calls = {}, set()
    for path in glob.glob(os.path.join(run, "*.%d.json.gz" % pid)):
        with gzip.open(path, "rt") as f:
            for line in f:
                line = line.strip().rstrip(",")
                if '"name":"nccl' not in line:
                    continue
                e = json.loads(line)
                if e.get("cat") == "nvtx" and e.get("ph") == "B":
                    calls.add(e["name"][4:])
                if e.get("cat") != "kernel":
                    continue
                name = e["name"].split("(")[0]
                for pre in ("ncclDevKernel_", "ncclKernel_", "nccl"):
                    if name.startswith(pre):
                        name = name[len(pre):]
                        break
                op = name.split("_")[0]
                ops[op] = ops.get(op, 0) + 1
    return ops, calls


def check_collectives(case, run, devs, backend, want_ops):
    """Each rank's collectives at its peak: with NCCL, as many as its trace
    holds, the ops named among them, want_ops among those the trace holds;
    with gloo (the CPU's), none."""
    for r, d in sorted(devs.items()):
        c = (d.get("peak") or {}).get("collectives")
        in_trace, calls = trace_collectives(run, d["pid"])
        known = set(in_trace) | calls
        if backend != "nccl":
            row("%s.collectives.rank%d" % (case, r), c is None and not in_trace,
                "%s: NCCL kernels in the trace %s, analyze's collectives %s" % (backend, in_trace, c))
            continue
        named = [x["op"] for x in (c or {}).get("during", [])] + [
            (c or {}).get(k, {})["op"] for k in ("before", "after") if (c or {}).get(k)]
        row("%s.collectives.rank%d" % (case, r),
            c is not None and c["seen"] == sum(in_trace.values()) and set(named) <= known and
            set(want_ops) <= known,
            "kernels in the trace %s, NCCL calls %s; analyze: seen %s, at the peak (t %s): during %s, before %s, "
            "after %s" % (in_trace, sorted(calls), (c or {}).get("seen"), d["peak"].get("t"),
                [(x["op"], x["launch_t"], x["start_t"], x["end_t"]) for x in (c or {}).get("during", [])],
                ((c or {}).get("before") or {}).get("op"), ((c or {}).get("after") or {}).get("op")))


ngpu = int(subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                          capture_output=True, text=True).stdout.strip() or 0)
runs = []

if "toy" in CASES:
    run, p, printed = traced("toy", 2, "two_ranks.py")
    manifests = glob.glob(os.path.join(run, "manifest.*.json"))
    m = json.load(open(manifests[0])) if manifests else {}
    files = sorted(t["file"] for t in m.get("traces", []))
    # torchrun itself may touch CUDA (proc.HOST.PID.json.gz): the ranks' are what count
    row("toy.run", p.returncode == 0 and len(printed) == 2 and len(manifests) == 1 and
        [f.split(".")[0] for f in files if f.startswith("rank")] == ["rank0", "rank1"] and
        all(t["complete"] for t in m["traces"]),
        "exit %d; ranks printed %s; manifests %d listing %s" % (p.returncode, sorted(printed), len(manifests),
                                                               files))
    doc, err = analyze(run)
    by_rank = {t["rank"]: t for t in doc.get("traces", []) if t.get("rank") is not None}
    starts = {t.get("job_start_unix_ns") for t in by_rank.values()}
    row("toy.identity", sorted(by_rank) == [0, 1] and all(
        t["world_size"] == 2 and t["local_world_size"] == 2 and t["local_rank"] == r and t["hostname"]
        for r, t in by_rank.items()) and len(starts) == 1 and None not in starts,
        "; ".join("rank %s: local %s, world %s, local world %s, host %s, job start %s" % (
            r, t.get("local_rank"), t.get("world_size"), t.get("local_world_size"), t.get("hostname"),
            t.get("job_start_unix_ns")) for r, t in sorted(by_rank.items())))
    check_peaks("toy", doc, printed)
    k = doc.get("ranks") or {}
    pk = {r["rank"]: r["peak"] for r in k.get("by_rank", [])}
    row("toy.ranks", k.get("first_out_rank") == 1 and k.get("spread") == abs(pk.get(1, 0) - pk.get(0, 0)) and
        (k.get("why") or {}).get("compared_with_rank") == 0,
        "first out rank %s by %s, spread %s, why against rank %s" % (
            k.get("first_out_rank"), k.get("first_out_by"), k.get("spread"),
            (k.get("why") or {}).get("compared_with_rank")))
    runs.append(run)

for strategy in [c for c in ("ddp", "fsdp2") if c in CASES]:
    run, p, printed = traced(strategy, 2, "train_gpt2.py", "--strategy", strategy)
    backend = {v.get("backend") for v in printed.values()}
    row("%s.run" % strategy, p.returncode == 0 and len(printed) == 2,
        "exit %d, ranks %s, backend %s, %d GPU(s)%s" % (p.returncode, sorted(printed), "/".join(sorted(backend)),
                                                    ngpu, "" if p.returncode == 0 else ": " + p.stderr[-400:]))
    if p.returncode != 0:
        continue
    doc, err = analyze(run)
    devs = check_peaks(strategy, doc, printed)
    check_collectives(strategy, run, devs, "/".join(sorted(backend)),
                      ["AllReduce"] if strategy == "ddp" else ["AllGather", "ReduceScatter"])
    k = doc.get("ranks") or {}
    row("%s.ranks" % strategy, len(k.get("by_rank", [])) == 2 and k.get("first_out_by") in ("headroom", "oom"),
        "ranks %s, first out rank %s by %s, spread %s" % (
            [r["rank"] for r in k.get("by_rank", [])], k.get("first_out_rank"), k.get("first_out_by"),
            k.get("spread")))
    for r in sorted(printed):
        cats = peak_cats(devs.get(r, {}))
        par = cats.get("parameters", {}).get("bytes", 0)
        st = cats.get("optimizer state", {}).get("bytes", 0)
        want_p, want_s = printed[r]["param_shard"], printed[r]["state_shard"]
        # the blocks that hold them: what memory_allocated() counts, each a
        # little over its tensor (a shard padded to the world size; a block
        # PyTorch's allocator did not split, up to 1 MiB over)
        near = lambda got, want: want <= got <= want * 1.05 + (1 << 20)  # noqa: E731
        full = sum(printed[x]["param_shard"] for x in printed) if strategy == "fsdp2" else want_p
        row("%s.shards.rank%d" % (strategy, r), near(par, want_p) and near(st, want_s) and
            (strategy != "fsdp2" or par < 0.6 * full),
            "at the peak: parameters %d (this rank's %d, +%.2f%%; the whole model's %d), optimizer state %d "
            "(this rank's %d, +%.2f%%)" % (par, want_p, 100.0 * (par - want_p) / max(want_p, 1), full, st, want_s,
                                          100.0 * (st - want_s) / max(want_s, 1)))
    runs.append(run)

if "nccl" in CASES:
    run, p, printed = traced("nccl", 1, "train_gpt2.py", "--strategy", "ddp", "--backend", "nccl", "--steps", "2")
    ok = p.returncode == 0 and 0 in printed
    doc, err = analyze(run) if ok else ({}, "")
    d = rank_devices(doc).get(0, {})
    other = peak_cats(d).get("other", {})
    by = {g["name"]: g["bytes"] for g in other.get("by") or []}
    libs = sorted(set(a.get("library") for a in (d.get("peak") or {}).get("top", []) if a.get("library")))
    nccl = sum(v for n, v in by.items() if "NCCL" in n)
    s = d.get("summary", {})
    if ok:
        # one rank: NCCL may run no kernel at all (a copy, or nothing, does)
        c = (d.get("peak") or {}).get("collectives")
        in_trace, calls = trace_collectives(run, d.get("pid", -1))
        row("nccl.collectives", (c or {}).get("seen", 0) == sum(in_trace.values()),
            "one rank: NCCL kernels in the trace %s (NCCL calls %s), analyze's collectives %s" % (
                in_trace, sorted(calls), c))
    row("nccl", ok and nccl > 0 and s.get("allocated", {}).get("peak") == printed[0]["max_allocated"],
        "exit %d; outside PyTorch at the peak by what: %s; libraries among the largest: %s; NCCL %d B; "
        "allocated peak %s (PyTorch %s)%s" % (
            p.returncode, by, libs, nccl, s.get("allocated", {}).get("peak"), printed.get(0, {}).get("max_allocated"),
            "" if ok else ": " + p.stderr[-400:]))

if "merge" in CASES and runs:
    for run in runs:
        out = run + ".merged.json.gz"
        p = subprocess.run([GP, "merge", "--force", run, "-o", out], capture_output=True, text=True, timeout=300)
        ok = p.returncode == 0
        what = "exit %d %s" % (p.returncode, p.stderr.strip()[-300:])
        if ok:
            with gzip.open(out, "rt") as f:
                ev = json.load(f)
            names = {}
            for e in ev:
                if e.get("ph") == "M" and e.get("name") == "process_name":
                    names[e["pid"]] = e["args"]["name"]
            pids = {e["pid"] for e in ev if "pid" in e}
            ranks = sorted({n.split(" ")[1] for n in names.values() if n.startswith("rank ")})
            bad_ts = sum(1 for e in ev if "ts" in e and not isinstance(e["ts"], (int, float)))
            ok = ev[0].get("name") == "gpuprof.merge" and len(ranks) >= 2 and bad_ts == 0 and all(
                p_ in names for p_ in pids if p_ != 0)
            what = "%d events, %d processes named, ranks %s, first %s" % (len(ev), len(names), ranks,
                                                                          ev[0].get("name"))
        row("merge.%s" % os.path.basename(run), ok, what)
sys.exit(1 if failed else 0)
