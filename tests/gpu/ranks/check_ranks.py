#!/usr/bin/env python3
"""Multi-rank jobs traced into run directories, checked against what PyTorch
measured in each rank. Prints RESULT rows; exit 1 when one failed. A rank
per GPU (2 to 4; two ranks sharing the GPU where there is one).

  toy     torchrun (tests/gpu/ranks/two_ranks.py): one trace per rank in the
          run directory, the manifest, each rank's identity and the job's
          start; peaks = PyTorch's; analyze's ranks: the larger rank first out
  ddp     GPT-2 small, DDP: peaks = PyTorch's
  fsdp2   GPT-2 small, FSDP2: peaks = PyTorch's; the parameters at the peak
          are this rank's shards and the whole parameters FSDP2 gathered
          (gpuprof:torch.param), the optimizer state its shards
          (ddp, fsdp2: with NCCL, the collectives analyze counts are the NCCL
          kernels in each trace, their ops named, NCCL's memory named; with
          gloo, none)
  uneven  DDP with a batch per rank (4, 6, 8, 10): peaks = PyTorch's; the
          largest rank runs out first, its extra activations named
  grow    DDP, rank 1 doubles its batch every step until it runs out: rank 1
          first out by its OOM, its growth named with its rate, the other
          ranks ended by torchrun's signal after it, its detail first
  nccl    one rank with NCCL: NCCL's device memory named, not PyTorch's
  one     one process on the host: its trace and analysis show its one GPU
  merge   the run directories merged into one Perfetto trace: valid, a
          process group per rank; --align collectives on two ranks' traces,
          one of them moved to a host whose clock is 3.217 ms ahead: the
          offset found from their NCCL kernels
Every rank of every job: exactly one GPU, its own (local rank), in the
trace and in analyze. With one GPU the ranks share it over gloo (NCCL
refuses two ranks on a GPU); with two GPUs or more, NCCL.

usage: check_ranks.py GPUPROF OUT [CASE...]"""
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from result_rows import Rows  # noqa: E402

GP, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
CASES = sys.argv[3:] or ["toy", "ddp", "fsdp2", "uneven", "grow", "nccl", "one", "merge"]
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(OUT, exist_ok=True)
row = Rows("ranks")


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
    # the ranks share one stdout: a line may run into the next rank's
    text = re.sub(r"(?=(?:rank|RANK) \d+ local \d+ world \d+)", "\n", p.stdout)
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 6 and w[0] in ("rank", "RANK") and w[2] == "local" and w[1].isdigit():
            d = {"local": int(w[3]), "world": int(w[5])}
            d.update((k, int(v) if v.isdigit() else v) for k, v in (x.split("=", 1) for x in w[6:] if "=" in x))
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


def trace_events(path, *needles):
    """The events of a trace file, read from the file itself (a line each):
    those whose line holds one of needles, or all without any."""
    with gzip.open(path, "rt") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line.startswith("{") and (not needles or any(n in line for n in needles)):
                yield json.loads(line)


def trace_collectives(run, pid):
    """NCCL's kernels in the trace of process pid, read from the file itself:
    {op: count}, op as the kernel's name says it (ncclDevKernel_AllGather_RING_LL:
    AllGather; ncclDevKernel_Generic_1: Generic); and the ops of NCCL's NVTX
    ranges of its calls (ncclAllGather: AllGather), which name the kernels
    they launch."""
    ops, calls = {}, set()
    for path in glob.glob(os.path.join(run, "*.%d.json.gz" % pid)):
        for e in trace_events(path, '"name":"nccl'):
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
# a rank per GPU, 2 to 4 (two share the one GPU over gloo where there is one)
NPROC = min(max(ngpu, 2), 4)
runs = []


def own_gpus(case, doc, printed, nccl):
    """Each rank's trace shows one GPU, its own: analyze's devices of its
    pid, and the GPU tracks and device records in the trace file itself."""
    pid_rank = {t["pid"]: t["rank"] for t in doc.get("traces", []) if t.get("rank") is not None}
    by_pid = {}
    for d in doc.get("devices", []):
        by_pid.setdefault(d["pid"], []).append(d["device"])
    for pid, r in sorted(pid_rank.items(), key=lambda x: x[1]):
        want = [printed.get(r, {}).get("local", r) % max(ngpu, 1)]
        in_file = set()
        for path in glob.glob(os.path.join(OUT, case, "rank%d.%d.json.gz" % (r, pid))):
            in_file.update(e["args"]["device"] for e in trace_events(path, '"gpuprof.device"', '"torch.attach"'))
        row("%s.gpus.rank%d" % (case, r), by_pid.get(pid) == want and sorted(in_file) == want,
            "analyze's devices %s, the trace's device records and torch.attach %s; its GPU %s%s" % (
                by_pid.get(pid), sorted(in_file), want, "" if nccl else " (shared)"))
    k = doc.get("ranks") or {}
    row("%s.rows" % case, len(k.get("by_rank", [])) == len(printed) == len({x["rank"] for x in k["by_rank"]}),
        "%d rank rows for %d ranks" % (len(k.get("by_rank", [])), len(printed)))


def nccl_named(case, devs):
    """NCCL's buffers at each rank's peak, named NCCL's (outside PyTorch)."""
    for r, d in sorted(devs.items()):
        other = peak_cats(d).get("other", {})
        nccl = sum(g["bytes"] for g in other.get("by") or [] if "NCCL" in g["name"])
        row("%s.nccl_memory.rank%d" % (case, r), nccl > 0,
            "outside PyTorch at the peak: %s" % {g["name"]: g["bytes"] for g in other.get("by") or []})


if "toy" in CASES:
    backend = "nccl" if ngpu >= NPROC else "gloo"
    run, p, printed = traced("toy", NPROC, "two_ranks.py", "--backend", backend)
    manifests = glob.glob(os.path.join(run, "manifest.*.json"))
    m = json.load(open(manifests[0])) if manifests else {}
    files = sorted(t["file"] for t in m.get("traces", []))
    # torchrun itself may touch CUDA (proc.HOST.PID.json.gz): the ranks' are what count
    row("toy.run", p.returncode == 0 and len(printed) == NPROC and len(manifests) == 1 and
        sorted(f.split(".")[0] for f in files if f.startswith("rank")) == ["rank%d" % r for r in range(NPROC)]
        and all(t["complete"] for t in m["traces"]),
        "exit %d; %s; ranks printed %s; manifests %d listing %s" % (p.returncode, backend, sorted(printed),
                                                                    len(manifests), files))
    doc, err = analyze(run)
    by_rank = {t["rank"]: t for t in doc.get("traces", []) if t.get("rank") is not None}
    starts = {t.get("job_start_unix_ns") for t in by_rank.values()}
    row("toy.identity", sorted(by_rank) == list(range(NPROC)) and all(
        t["world_size"] == NPROC and t["local_world_size"] == NPROC and t["local_rank"] == r and t["hostname"]
        for r, t in by_rank.items()) and len(starts) == 1 and None not in starts,
        "; ".join("rank %s: local %s, world %s, local world %s, host %s, job start %s" % (
            r, t.get("local_rank"), t.get("world_size"), t.get("local_world_size"), t.get("hostname"),
            t.get("job_start_unix_ns")) for r, t in sorted(by_rank.items())))
    check_peaks("toy", doc, printed)
    own_gpus("toy", doc, printed, backend == "nccl")
    k = doc.get("ranks") or {}
    pk = {r["rank"]: r["peak"] for r in k.get("by_rank", [])}
    typical = sorted(pk, key=lambda r: pk[r])[(len(pk) - 1) // 2] if pk else None
    row("toy.ranks", k.get("first_out_rank") == NPROC - 1 and
        k.get("spread") == max(pk.values() or [0]) - min(pk.values() or [0]) and
        (k.get("why") or {}).get("compared_with_rank") == typical,
        "first out rank %s by %s, spread %s, why against rank %s (the median: %s)" % (
            k.get("first_out_rank"), k.get("first_out_by"), k.get("spread"),
            (k.get("why") or {}).get("compared_with_rank"), typical))
    runs.append(run)


def gpt2_job(case, *args):
    run, p, printed = traced(case, NPROC, "train_gpt2.py", *args)
    backend = "/".join(sorted({v.get("backend") for v in printed.values()}))
    return run, p, printed, backend


for strategy in [c for c in ("ddp", "fsdp2") if c in CASES]:
    run, p, printed, backend = gpt2_job(strategy, "--strategy", strategy)
    row("%s.run" % strategy, p.returncode == 0 and len(printed) == NPROC,
        "exit %d, ranks %s, backend %s, %d GPU(s)%s" % (p.returncode, sorted(printed), backend,
                                                    ngpu, "" if p.returncode == 0 else ": " + p.stderr[-400:]))
    if p.returncode != 0:
        continue
    doc, err = analyze(run)
    devs = check_peaks(strategy, doc, printed)
    own_gpus(strategy, doc, printed, backend == "nccl")
    check_collectives(strategy, run, devs, backend,
                      ["AllReduce"] if strategy == "ddp" else ["AllGather", "ReduceScatter"])
    if backend == "nccl":
        nccl_named(strategy, devs)
    k = doc.get("ranks") or {}
    row("%s.ranks" % strategy, len(k.get("by_rank", [])) == NPROC and k.get("first_out_by") in ("headroom", "oom"),
        "ranks %s, first out rank %s by %s, spread %s" % (
            [r["rank"] for r in k.get("by_rank", [])], k.get("first_out_rank"), k.get("first_out_by"),
            k.get("spread")))
    gathered = 0
    if strategy == "fsdp2":
        for path in glob.glob(os.path.join(run, "rank*.json.gz")):
            gathered += sum(1 for _ in trace_events(path, "gpuprof:torch.param "))
        row("fsdp2.gathered_marks", gathered > 0,
            "%d gpuprof:torch.param marks (FSDP2's gathered parameters named)" % gathered)
    for r in sorted(printed):
        cats = peak_cats(devs.get(r, {}))
        par = cats.get("parameters", {}).get("bytes", 0)
        st = cats.get("optimizer state", {}).get("bytes", 0)
        want_p, want_s = printed[r]["param_shard"], printed[r]["state_shard"]
        # the blocks that hold them: what memory_allocated() counts, each a
        # little over its tensor (a shard padded to the world size; a block
        # PyTorch's allocator did not split, up to 1 MiB over); FSDP2's:
        # also the whole parameters of the groups gathered then (at most
        # the one running and the one prefetched, each at most the largest)
        near = lambda got, want, extra=0: want <= got <= want * 1.05 + (1 << 20) + extra  # noqa: E731
        full = sum(printed[x]["param_shard"] for x in printed) if strategy == "fsdp2" else want_p
        extra = printed[r].get("two_groups", 0) if strategy == "fsdp2" else 0
        row("%s.shards.rank%d" % (strategy, r), near(par, want_p, extra) and near(st, want_s) and
            (strategy != "fsdp2" or par < full),
            "at the peak: parameters %d (this rank's %d, +%.2f%%; the two largest groups gathered whole %d; the "
            "whole model's %d), optimizer state %d (this rank's %d, +%.2f%%)" % (
                par, want_p, 100.0 * (par - want_p) / max(want_p, 1), extra, full,
                st, want_s, 100.0 * (st - want_s) / max(want_s, 1)))
    runs.append(run)

if "uneven" in CASES:
    batches = ",".join(str(4 + 2 * r) for r in range(NPROC))
    run, p, printed, backend = gpt2_job("uneven", "--strategy", "ddp", "--batches", batches)
    row("uneven.run", p.returncode == 0 and len(printed) == NPROC,
        "exit %d, batches %s, backend %s%s" % (p.returncode, batches, backend,
                                              "" if p.returncode == 0 else ": " + p.stderr[-400:]))
    if p.returncode == 0:
        doc, err = analyze(run)
        check_peaks("uneven", doc, printed)
        own_gpus("uneven", doc, printed, backend == "nccl")
        k = doc.get("ranks") or {}
        why = k.get("why") or {}
        cats = {c["name"]: c["delta"] for c in why.get("by_category") or []}
        row("uneven.story", k.get("first_out_rank") == NPROC - 1 and
            why.get("compared_with_rank") == (NPROC - 1) // 2 and cats.get("activations", 0) > 0 and
            max(cats, key=lambda c: cats[c], default=None) == "activations",
            "first out rank %s by %s, against rank %s: %s" % (
                k.get("first_out_rank"), k.get("first_out_by"), why.get("compared_with_rank"), cats))

if "grow" in CASES:
    run, p, printed, backend = gpt2_job("grow", "--strategy", "ddp", "--batch", "2", "--grow-rank", "1",
                                        "--steps", "14")
    oom = re.findall(r"OOM rank 1 step \d+ batch \d+", p.stdout)
    steps = re.findall(r"STEP rank 1 step \d+", p.stdout)
    row("grow.run", p.returncode != 0 and len(oom) == 1, "exit %d, %s after %d steps%s" % (
        p.returncode, oom[0] if oom else "no OOM", len(steps), "" if oom else ": " + p.stderr[-400:]))
    doc, err = analyze(run)
    text = open(run + ".analyze.txt").read()
    k = doc.get("ranks") or {}
    rows = {x["rank"]: x for x in k.get("by_rank", [])}
    d1 = rank_devices(doc).get(1, {})
    g = d1.get("growth") or {}
    others = [x for r, x in rows.items() if r != 1]
    stopped = all(x.get("stopped_after_first") and x.get("end_signal") for x in others)
    order = [int(m.split("process ")[1].split(":")[0]) for m in text.splitlines()
             if m.startswith("GPU ") and " of process " in m]
    row("grow.story", k.get("first_out_rank") == 1 and k.get("first_out_by") == "oom" and
        g.get("factor_per_step", 0) >= 1.5 and bool(others) and stopped and
        order[:1] == [rows.get(1, {}).get("pid")],
        "first out rank %s by %s at step %s; rank 1's growth x%s a step from step %s to %s (%s to %s); other ranks "
        "%s; GPU sections in the text, by pid: %s (rank 1: %s)" % (
            k.get("first_out_rank"), k.get("first_out_by"), rows.get(1, {}).get("first_oom_step"),
            g.get("factor_per_step"), g.get("since_step"), g.get("last_step"), g.get("first_peak"),
            g.get("last_peak"), [(x["rank"], x.get("end_signal"), x.get("stopped_after_first")) for x in others],
            order, rows.get(1, {}).get("pid")))
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
    row("nccl", ok and nccl > 0 and s.get("allocated", {}).get("peak") == printed[0]["max_allocated"] and
        s.get("reserved", {}).get("peak") == printed[0]["max_reserved"],
        "exit %d; outside PyTorch at the peak by what: %s; libraries among the largest: %s; NCCL %d B; "
        "allocated peak %s (PyTorch %s), reserved peak %s (PyTorch %s)%s" % (
            p.returncode, by, libs, nccl, s.get("allocated", {}).get("peak"), printed.get(0, {}).get("max_allocated"),
            s.get("reserved", {}).get("peak"), printed.get(0, {}).get("max_reserved"),
            "" if ok else ": " + p.stderr[-400:]))

if "one" in CASES:
    # one process on a host of several GPUs: one GPU in its trace and analysis
    path = os.path.join(OUT, "one.json.gz")
    p = subprocess.run([GP, "--trace", "--force", "-o", path, os.path.join(HERE, "..", "..", "torch",
                                                                           "train_models.py"),
                        "--model", "gpt2", "--steps", "2", "--warmup", "1"],
                       capture_output=True, text=True, timeout=400)
    q = subprocess.run([GP, "analyze", "--json", path], capture_output=True, text=True)
    doc = json.loads(q.stdout or "{}")
    devs = [d["device"] for d in doc.get("devices", [])]
    recs, gpu_pids = set(), set()
    if os.path.exists(path):
        for e in trace_events(path):
            if e.get("name") in ("gpuprof.device", "torch.attach"):
                recs.add(e["args"]["device"])
            if isinstance(e.get("pid"), int) and e["pid"] >= 1000000000:
                gpu_pids.add(e["pid"] % 100)
    s = (doc.get("devices") or [{}])[0].get("summary", {})
    want = [m.split("=")[1] for m in p.stdout.split() if m.startswith("max_allocated=")]
    row("one", p.returncode == 0 and devs == [0] and recs == {0} and gpu_pids == {0} and
        [str(s.get("allocated", {}).get("peak"))] == want,
        "exit %d on a host of %d GPUs: analyze's devices %s; device records and torch.attach %s; GPU tracks %s; "
        "allocated peak %s (PyTorch %s)" % (p.returncode, ngpu, devs, sorted(recs), sorted(gpu_pids),
                                           s.get("allocated", {}).get("peak"), want))

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
    # --align collectives on real NCCL kernels: rank 1's trace moved to a
    # host whose clock runs 3.217 ms ahead; the offset found must undo it
    ddp = os.path.join(OUT, "ddp")
    r0, r1 = sorted(glob.glob(os.path.join(ddp, "rank0.*.json.gz"))), sorted(glob.glob(os.path.join(ddp, "rank1.*.json.gz")))
    if r0 and r1 and ngpu >= 2:
        shift = 3217000
        moved = os.path.join(OUT, "align.rank1.json.gz")
        with gzip.open(r1[0], "rt") as f, gzip.open(moved, "wt") as g:
            for n, line in enumerate(f):
                if n < 3 and '"gpuprof.meta"' in line:
                    e = json.loads(line.strip().rstrip(","))
                    e["args"]["hostname"] += "-ahead"
                    e["args"]["ts_base_ns"] += shift
                    e["args"]["start_unix_ns"] += shift
                    line = json.dumps(e, separators=(",", ":")) + ",\n"
                g.write(line)
        out = os.path.join(OUT, "align.merged.json.gz")
        p = subprocess.run([GP, "merge", "--force", "--align", "collectives", r0[0], moved, "-o", out],
                           capture_output=True, text=True, timeout=300)
        found = [ln for ln in p.stderr.splitlines() if "aligned on host" in ln]
        off = None
        if found:
            try:
                off = float(found[0].split("kernels: ")[1].split(" us")[0])
            except (IndexError, ValueError):
                off = None
        row("merge.align", p.returncode == 0 and off is not None and abs(abs(off) - shift / 1000.0) < 50.0,
            "exit %d, moved by %+.3f us; merge said: %s" % (p.returncode, shift / 1000.0,
                                                         found[0] if found else p.stderr.strip()[-300:]))
sys.exit(row.exit_status())
