"""Tests of `gpuprof merge` (viewer/merge/) on synthetic traces of a run:
ranks on two hosts, one of them with a clock skew, with NCCL kernels that end
together on every rank, flows and NVTX async ranges whose ids repeat across
ranks, and pids that repeat across hosts. Each trace's events are known, so
the merged trace is compared with them line for line, byte for byte.

  test_merge.py GPUPROF TEST

TEST is one of the functions named test_* below, without the prefix.
Exit 0 when every check passed, 1 otherwise."""
import gzip
import json
import os
import random
import re
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "analyze"))
sys.path.insert(0, os.path.join(ROOT, "exporters"))
import checks  # noqa: E402
from checks import check, eq  # noqa: E402
from trace_format import CAT, EV, F, T  # noqa: E402  (the names of the trace)

GP = None
TMP = None
DOT = "\u00b7"
GPU_BASE = 1_000_000_000
T0 = 1_760_000_000_000_000_000  # the true time the run starts (ns)
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
ALLGATHER = "ncclDevKernel_AllGather_RING_LL"
ADDED = ("process_labels", EV.PROCESS_SORT_INDEX.name, EV.PROCESS_NAME.name)


def us(ns):
    """ns as the format writes ts: microseconds with exactly 3 decimals."""
    sign = "-" if ns < 0 else ""
    return "%s%d.%03d" % (sign, abs(ns) // 1000, abs(ns) % 1000)


def ns_of(text):
    """A ts's text as ns, exactly (no float)."""
    neg = text.startswith("-")
    whole, _, frac = text.lstrip("-").partition(".")
    v = int(whole) * 1000 + int((frac + "000")[:3])
    return -v if neg else v


class Rank:
    """One process's trace: its events kept as structures, rendered as the
    recorder writes them, or as the merge should rewrite them."""

    def __init__(self, rank, host, pid, start, skew=0, world=3, seed=0, collectives=20, gathers=10,
                 drop_kernel=False):
        self.rank, self.host, self.pid, self.skew = rank, host, pid, skew
        self.gpu = GPU_BASE + pid * 100
        # the CUPTI clock of this host reads true time + skew
        self.ts_base = T0 + start + skew
        self.events = []
        rng = random.Random(seed)
        args = {F.FORMAT: 1, F.VERSION: "0.1.0", F.PID: pid, F.PPID: 1, F.CMDLINE: "python3 train.py",
                F.HOSTNAME: host, F.START_UNIX_NS: self.ts_base, F.TS_BASE_NS: self.ts_base,
                F.CLOCK: "cupti", F.MODE: "cuda", F.GPU_PID_BASE: self.gpu}
        if rank is not None:
            args.update({F.RANK: rank, F.WORLD_SIZE: world})
        self.meta = self.ev("i", EV.META.name, CAT.GPUPROF, pid, 0, 0, s="g", args=args)
        self.ev("M", EV.PROCESS_NAME.name, "", pid, 0, 0, args={F.NAME: "python3 train.py (pid %d)" % pid})
        self.ev("M", EV.PROCESS_NAME.name, "", self.gpu, 0, 0,
                args={F.NAME: "GPU 0: Synthetic \"H100\" (pid %d)" % pid})
        self.ev("M", EV.PROCESS_SORT_INDEX.name, "", self.gpu, 0, 0, args={"sort_index": 100})
        self.ev("M", EV.THREAD_NAME.name, "", self.gpu, 7, 0, args={F.NAME: "stream 7"})
        body = []
        corr = 0
        names = [ALLREDUCE] * collectives + [ALLGATHER] * gathers
        for i, name in enumerate(names):
            if drop_kernel and i == 3:
                continue
            corr += 1
            # the collective ends at the same true instant on every rank
            # (give or take 300 ns); it starts when this rank got there
            true_end = T0 + 2_000_000_000 + i * 5_000_000 + (i * 7919) % 100_000
            end = true_end + skew + rng.randint(-300, 300) - self.ts_base
            start = end - rng.randint(20_000, 400_000)
            launch = start - rng.randint(5_000, 50_000)
            body.append(self.mk("X", "cuLaunchKernel", CAT.CUDA_DRIVER, pid, pid, launch, dur=3_000,
                                args={F.CORR: corr}))
            body.append(self.mk("s", "launch", CAT.FLOW, pid, pid, launch, id=corr))
            body.append(self.mk("f", "launch", CAT.FLOW, self.gpu, 7, start, id=corr, bp="e"))
            body.append(self.mk("X", name, CAT.KERNEL, self.gpu, 7, start, dur=end - start,
                                args={F.CORR: corr, "grid": [1, 1, 1], "block": [512, 1, 1]}))
            body.append(self.mk("b", "bwd:layer%d" % (i % 3), CAT.NVTX, pid, pid + 1, start - 10_000, id=i + 1,
                                args={F.DOMAIN: "default"}))
            body.append(self.mk("e", "bwd:layer%d" % (i % 3), CAT.NVTX, pid, pid, end + 10_000, id=i + 1))
            body.append(self.mk("i", EV.ALLOC.name, CAT.MEMORY, self.gpu, 0, start - 1_001, s="t",
                                args={F.ADDR: "0x7f00%08x" % i, F.BYTES: 1 << 20, F.KIND: "device"}))
        # a kernel on a second GPU the trace never names
        body.append(self.mk("X", "gemm", CAT.KERNEL, self.gpu + 1, 9, 1_500_000_000, dur=1_234,
                            args={F.CORR: 0}))
        # an event with no pid: it joins the trace's process
        body.append('{"ph":"i","name":"nopid","s":"g","ts":%s}' % us(1_000))
        rng.shuffle(body)  # the recorder writes as it decodes, not in time order
        self.events.extend(body)
        self.ev("i", EV.END.name, CAT.GPUPROF, pid, 0, 3_000_000_000, s="g", args={F.CLEAN: True})

    def mk(self, ph, name, cat, pid, tid, ts, dur=None, s=None, id=None, bp=None, args=None):
        return {"ph": ph, "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "s": s,
                "id": id, "bp": bp, "args": args}

    def ev(self, *a, **kw):
        e = self.mk(*a, **kw)
        self.events.append(e)
        return e

    @staticmethod
    def render(e, pid=lambda p: p, shift=0, idmap=lambda i: i, prefix="", sort_index=None):
        if isinstance(e, str):  # written as it is: the nopid event
            if not prefix:
                return e
            return e.replace("{", '{"pid":%d,' % pid(None), 1).replace(
                '"ts":%s' % re.search(r'"ts":([-0-9.]+)', e).group(1),
                '"ts":%s' % us(ns_of(re.search(r'"ts":([-0-9.]+)', e).group(1)) + shift))
        parts = ['"ph":%s' % json.dumps(e["ph"]), '"name":%s' % json.dumps(e["name"]),
                 '"cat":%s' % json.dumps(e["cat"]), '"pid":%d' % pid(e["pid"]), '"tid":%d' % e["tid"],
                 '"ts":%s' % us(e["ts"] + shift)]
        if e["dur"] is not None:
            parts.append('"dur":%s' % us(e["dur"]))
        if e["s"] is not None:
            parts.append('"s":%s' % json.dumps(e["s"]))
        if e["id"] is not None:
            parts.append('"id":%d' % idmap(e["id"]))
        if e["bp"] is not None:
            parts.append('"bp":%s' % json.dumps(e["bp"]))
        if e["args"] is not None:
            args = dict(e["args"])
            if e["ph"] == "M" and e["name"] == EV.PROCESS_NAME.name and prefix:
                args[F.NAME] = prefix + args[F.NAME]
            if e["ph"] == "M" and e["name"] == EV.PROCESS_SORT_INDEX.name and sort_index is not None:
                args["sort_index"] = sort_index
            parts.append('"args":%s' % json.dumps(args, separators=(",", ":"), ensure_ascii=False))
        return "{" + ",".join(parts) + "}"

    def lines(self):
        return [self.render(e) for e in self.events]

    def write(self, path, cut=None, damage=None):
        lines = self.lines()
        if damage:
            lines[damage[0] - 2] = damage[1]  # line N of the file: "[" is line 1
        data = ("[\n" + ",\n".join(lines) + "\n]\n").encode()
        z = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        if cut is None:
            blob = z.compress(data) + z.flush()
        else:
            # what a killed recorder leaves: flushed data, no trailer, half a line
            blob = z.compress(data[:cut]) + z.flush(zlib.Z_SYNC_FLUSH)
        with open(path, "wb") as f:
            f.write(blob)
        return path


def run(args, expect=0):
    p = subprocess.run([GP, "merge"] + args, capture_output=True, text=True, cwd=TMP)
    check(p.returncode == expect, "merge %s: exit %d, expected %d; stderr: %s" % (
        " ".join(args), p.returncode, expect, p.stderr.strip()))
    return p


def read_merged(path):
    """The merged trace's lines, checked to be one gzip member holding a
    JSON array, one event per line."""
    raw = open(path, "rb").read()
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    text = d.decompress(raw).decode()
    check(d.eof and not d.unused_data, "%s: one complete gzip member" % path)
    json.loads(text)  # raises where it is no JSON
    lines = text.split("\n")
    eq(lines[0], "[", "first line")
    eq(lines[-2:], ["]", ""], "last line")
    events = lines[1:-2]
    check(all(ln.endswith(",") for ln in events[:-1]) and not events[-1].endswith(","),
          "every event line but the last ends with ','")
    return [ln.rstrip(",") for ln in events]


def tmp(name):
    return os.path.join(TMP, name)


def write_run(ranks, prefix="t"):
    return [r.write(tmp("%s%d.json.gz" % (prefix, i))) for i, r in enumerate(ranks)]


def two_hosts(skew=3_217_123, drop_kernel=False, **kw):
    """ranks 0 and 1 on node-a, rank 2 on node-b whose clock is skew ahead;
    rank 2 has rank 0's pid (pids repeat across hosts). kw: every rank's
    collectives; drop_kernel: one missing on rank 2."""
    return [Rank(0, "node-a", 4242, 1_000_000, seed=1, **kw),
            Rank(1, "node-a", 4243, 13_345_678, seed=2, **kw),
            Rank(2, "node-b", 4242, 7_000_123, skew=skew, seed=3, drop_kernel=drop_kernel, **kw)]


def verify(ranks, events, order, offsets, base):
    """Every input event in the merged trace once, in its trace's order,
    rewritten exactly; the added metadata events right. order: ranks in
    merged order; offsets: each one's clock offset (ns)."""
    n = len(order)
    by_trace = {k: [] for k in range(n)}
    header = json.loads(events[0])
    for line in events[1:]:
        pid = json.loads(line).get("pid")
        check(isinstance(pid, int) and pid >= 100, "a pid of the merged trace: %r" % pid)
        by_trace.setdefault(pid // 100 - 1, []).append(line)
    eq(sorted(by_trace), list(range(n)), "traces by pid")
    for k, r in enumerate(order):
        new = (k + 1) * 100
        pidmap = lambda p, r=r, new=new: new if p in (None, r.pid) else new + 1 + (p - r.gpu)  # noqa: E731
        prefix = ("rank %d %s " % (r.rank, DOT)) if r.rank is not None else "%s %s " % (r.host, DOT)
        shift = r.ts_base + offsets[k] - base
        want = [Rank.render(e, pid=pidmap, shift=shift, idmap=lambda i, k=k: i * n + k, prefix=prefix,
                            sort_index=pidmap(e["pid"]) if isinstance(e, dict) else None)
                for e in r.events]
        got = by_trace[k]
        i = 0
        added = []
        for line in got:
            if i < len(want) and line == want[i]:
                i += 1
                continue
            added.append(json.loads(line))
        eq(i, len(want), "trace %d: its events in the merged trace, rewritten exactly, in order" % k)
        for a in added:
            check(a["ph"] == "M" and a["name"] in ADDED, "trace %d: an added event %r" % (k, a))
        pids = {new, new + 1, new + 2}
        label = ("rank %d, " % r.rank if r.rank is not None else "") + "host %s, pid %d" % (r.host, r.pid)
        for p in pids:
            names = [a["args"]["name"] for a in added if a["name"] == EV.PROCESS_NAME.name and a["pid"] == p]
            sort = [a["args"]["sort_index"] for a in added if a["name"] == EV.PROCESS_SORT_INDEX.name and a["pid"] == p]
            labels = [a["args"]["labels"] for a in added if a["name"] == "process_labels" and a["pid"] == p]
            eq(sort, [p], "trace %d pid %d: process_sort_index" % (k, p))
            eq(labels, [label + ("" if p == new else ", GPU %d" % (p - new - 1))],
               "trace %d pid %d: process_labels" % (k, p))
            # GPU 1 is named by no event of the trace: the merge names it
            eq(names, [prefix + "GPU 1 (pid %d)" % r.pid] if p == new + 2 else [],
               "trace %d pid %d: process_name added" % (k, p))
        for e in [json.loads(x) for x in got]:
            if e["name"] == EV.PROCESS_NAME.name:
                check(e["args"]["name"].startswith(prefix), "trace %d: process_name %r" % (k, e["args"]["name"]))
        ins = header["args"]["inputs"][k]
        eq((ins["rank"], ins["host"], ins["pid"], ins["merged_pid"], ins["offset_ns"]),
           (r.rank, r.host, r.pid, new, offsets[k]), "header: trace %d" % k)
    # flows and async ranges: ids never shared between traces
    seen = {}
    for line in events[1:]:
        e = json.loads(line)
        if "id" in e:
            key = (e["cat"], e["id"])
            check(seen.setdefault(key, e["pid"] // 100) == e["pid"] // 100, "id %r in two traces" % (key,))
    return header


def test_one_host():
    """Two ranks and a process without a rank on one host: one clock."""
    ranks = [Rank(1, "node-a", 4243, 13_345_678, seed=2), Rank(None, "node-a", 77, 2_000_000, seed=4),
             Rank(0, "node-a", 4242, 1_000_000, seed=1)]
    paths = write_run(ranks)
    p = run(paths + ["-o", "m.json.gz"])
    out = tmp("m.json.gz")
    eq(p.stderr.strip(), "gpuprof: merged 3 traces (ranks 0-1, 1 without a rank) into m.json.gz (%s); "
       "open it in https://ui.perfetto.dev" % re.search(r"\((\d[^)]*)\); open", p.stderr).group(1),
       "the last line")
    events = read_merged(out)
    order = [ranks[2], ranks[0], ranks[1]]
    base = min(r.ts_base for r in ranks)
    header = verify(ranks, events, order, [0, 0, 0], base)
    eq(events[0].split('"args":')[0], '{"ph":"i","s":"g","name":"gpuprof.merge","pid":0,"tid":0,"ts":0.000,',
       "the first event")
    a = header["args"]
    eq((a["traces"], a["ts_base_ns"], a["align"]), (3, base, "one host"), "header")
    eq([i["rank"] for i in a["inputs"]], [0, 1, None], "ranks first, in order")
    eq([i["aligned"] for i in a["inputs"]], ["one clock"] * 3, "aligned")
    eq(os.listdir(TMP).count("m.json.gz"), 1, "output")
    check(not [f for f in os.listdir(TMP) if f.startswith(".")], "no temporary file left")
    # plain JSON when asked
    run(paths + ["-o", "m.json"])
    json.loads(open(tmp("m.json")).read())


def test_wall():
    """Two hosts, aligned by their wall clocks: offsets 0, said so."""
    ranks = two_hosts()
    run(write_run(ranks) + ["-o", "m.json.gz"])
    p = run(write_run(ranks) + ["-o", "m.json.gz", "--force", "--align", "wall"])
    check("gpuprof: traces of 2 hosts aligned by their wall clocks (NTP/PTP: typically within a "
          "millisecond); --align collectives to align them on NCCL kernels" in p.stderr, "wall note: " + p.stderr)
    events = read_merged(tmp("m.json.gz"))
    header = verify(ranks, events, ranks, [0, 0, 0], min(r.ts_base for r in ranks))
    eq(header["args"]["align"], "wall clock", "align")
    eq([(h["host"], h["offset_ns"], h["aligned"]) for h in header["args"]["hosts"]],
       [("node-a", 0, "reference"), ("node-b", 0, "wall clock")], "hosts")
    check("NTP" in header["args"]["hosts"][1]["accuracy"], "accuracy said")


def test_collectives():
    """Two hosts, node-b's clock 3.2 ms ahead: found from the NCCL kernels."""
    skew = 3_217_123
    ranks = two_hosts(skew)
    p = run(write_run(ranks) + ["--align", "collectives", "-o", "m.json.gz"])
    events = read_merged(tmp("m.json.gz"))
    header = json.loads(events[0])
    hb = header["args"]["hosts"][1]
    eq((hb["host"], hb["aligned"], hb["matched"]), ("node-b", "collectives", 30), "node-b aligned")
    check(abs(hb["offset_ns"] + skew) <= 2000, "offset %d ns, truth %d" % (hb["offset_ns"], -skew))
    check(0 < hb["residual_ns"] < 1000, "residual %d ns" % hb["residual_ns"])
    check(re.search(r"gpuprof: host node-b: aligned on host node-a by 30 NCCL kernels: -3217\.\d{3} us "
                    r"\(residual 0\.\d{3} us\)", p.stderr), "stderr: " + p.stderr)
    offsets = [0, 0, hb["offset_ns"]]
    base = min(r.ts_base + o for r, o in zip(ranks, offsets))
    eq(header["args"]["ts_base_ns"], base, "merged base")
    verify(ranks, events, ranks, offsets, base)
    # the same collective now ends at the same merged time on both hosts
    ends = {}
    for line in events:
        e = json.loads(line)
        if e.get("cat") == CAT.KERNEL and e["name"] == ALLREDUCE:
            ends.setdefault(e["pid"] // 100, []).append(ns_of(line.split('"ts":')[1].split(",")[0]) +
                                                        ns_of(line.split('"dur":')[1].split(",")[0]))
    a, b = sorted(ends[1]), sorted(ends[3])
    check(max(abs(x - y) for x, y in zip(a, b)) < 3000, "collectives end together after alignment")

    # a kernel missing on node-b: left on its wall clock, and why
    ranks = two_hosts(skew, drop_kernel=True)
    p = run(write_run(ranks) + ["--align", "collectives", "-o", "m.json.gz", "-f"])
    hb = json.loads(read_merged(tmp("m.json.gz"))[0])["args"]["hosts"][1]
    eq((hb["aligned"], hb["offset_ns"]), ("wall clock", 0), "fallback")
    eq(hb["why"], "%s: 20 kernels on one host, 19 on the other" % ALLREDUCE, "why")
    check("gpuprof: host node-b: left on its wall clock (no NCCL kernels to align on: %s" % hb["why"]
          in p.stderr, "fallback said: " + p.stderr)
    # no collectives at all
    ranks = two_hosts(skew, collectives=0, gathers=2)
    run(write_run(ranks) + ["--align", "collectives", "-o", "m.json.gz", "-f"])
    hb = json.loads(read_merged(tmp("m.json.gz"))[0])["args"]["hosts"][1]
    eq(hb["why"], "2 NCCL kernels matched, 3 needed", "too few")
    # no NCCL kernel on either host: a plain answer (under UBSan, sorting
    # the empty lists was undefined: qsort(NULL, 0))
    ranks = two_hosts(skew, collectives=0, gathers=0)
    p = run(write_run(ranks) + ["--align", "collectives", "-o", "m.json.gz", "-f"])
    hb = json.loads(read_merged(tmp("m.json.gz"))[0])["args"]["hosts"][1]
    eq((hb["aligned"], hb["why"]), ("wall clock", "neither host's trace has one"), "none at all")
    check("gpuprof: host node-b: left on its wall clock (no NCCL kernels to align on: neither host's "
          "trace has one)" in p.stderr, "none at all said: " + p.stderr)


def test_run_dir():
    """A run directory stands for its traces (no manifest: every trace in it)."""
    ranks = two_hosts()
    os.mkdir(tmp("run"))
    for r in ranks:
        r.write(tmp("run/rank%d.%d.json.gz" % (r.rank, r.pid)))
    p = run(["run", "-o", "m.json.gz"])
    check(len(p.stderr.strip().split("\n")) >= 3, "notes: " + p.stderr)
    check("merged 3 traces (ranks 0-2) into m.json.gz" in p.stderr, "stderr: " + p.stderr)
    verify(ranks, read_merged(tmp("m.json.gz")), ranks, [0, 0, 0], min(r.ts_base for r in ranks))


def test_merged_input():
    """merge's output given where a trace is read: one line that says what
    it is and what to give instead, exit 2."""
    ranks = two_hosts()
    os.mkdir(tmp("run"))
    for r in ranks:
        r.write(tmp("run/rank%d.%d.json.gz" % (r.rank, r.pid)))
    run(["run", "-o", "m.json.gz"])
    said = ("m.json.gz%s: made by gpuprof merge (every process in one file, for Perfetto), not a trace: "
            "give the run directory or the traces that were merged instead")
    for args, where in ((["analyze", "m.json.gz"], ":2"), (["analyze", "--json", "m.json.gz"], ":2"),
                        (["report", "m.json.gz", "-o", "r.html"], ":2"),
                        (["check", "m.json.gz", "--max-peak", "1GiB"], ":2"),
                        (["compare", "m.json.gz", "run"], ":2"),
                        (["merge", "m.json.gz", "-o", "m2.json.gz"], "")):
        p = subprocess.run([GP] + args, capture_output=True, text=True, cwd=TMP)
        eq(p.returncode, 2, "%s: exit status" % " ".join(args))
        eq(p.stdout, "", "%s: nothing on stdout" % " ".join(args))
        line = p.stderr.splitlines()[0] if p.stderr else ""
        check(line.endswith(said % where) and len(p.stderr.splitlines()) == 1,
              "%s: one line that says what to give: %r" % (" ".join(args), p.stderr))
    check(not os.path.exists(tmp("r.html")) and not os.path.exists(tmp("m2.json.gz")), "nothing written")


def refused(args, want, what):
    """exit 2, one line on stderr holding want, no output left behind."""
    before = set(os.listdir(TMP))
    p = run(args, expect=2)
    check(want in p.stderr and p.stderr.count("\n") == 1, "%s: stderr %r, expected %r" % (what, p.stderr, want))
    eq(set(os.listdir(TMP)) - before, set(), "%s: nothing left behind" % what)
    return p


def test_bad():
    """Cut short, damaged lines, bad pids and ids, an existing output, usage: exit 2, one line,
    nothing left behind."""
    r0, r1 = two_hosts()[:2]
    good = r0.write(tmp("good.json.gz"))
    r1.write(tmp("good1.json.gz"))
    # cut short, half a line or whole lines: recover first
    n = len(("[\n" + ",\n".join(r1.lines())).encode())
    for cut in (n - 40, n // 2):
        r1.write(tmp("cut.json.gz"), cut=cut)
        refused([good, "cut.json.gz", "-o", "m.json.gz"],
                "gpuprof: cut.json.gz: cut short (no gzip trailer); repair it first: gpuprof recover cut.json.gz",
                "cut short at %d" % cut)
    # a plain trace without its closing ']'
    open(tmp("open.json"), "w").write("[\n" + ",\n".join(r1.lines()) + "\n")
    refused([good, "open.json", "-o", "m.json.gz"],
            "gpuprof: open.json: cut short (no closing ']'); repair it first: gpuprof recover open.json", "no ']'")
    refused([good, "missing.json.gz", "-o", "m.json.gz"], "gpuprof: missing.json.gz: No such file", "missing")
    # a line that is no JSON, a pid that is no number, a pid of no process of the trace
    for line, why in (('{"ph":"X","name":"k"', "line 7: "),
                      ('{"ph":"i","pid":"4243","ts":1.000}', "line 7: pid is not an integer"),
                      ('{"ph":"i","pid":77,"ts":1.000}', "line 7: a pid neither the process's"),
                      ('{"ph":"i","pid":-9223372036854775807}', "line 7: a pid neither the process's"),
                      ('{"ph":"i","pid":4243,"ts":1e3}', "line 7: ts or dur has an exponent"),
                      ('{"ph":"i","pid":4243,"ts":"1.000"}', "line 7: ts or dur is not a number"),
                      ('{"ph":"i","pid":4243,"pid":4243}', "line 7: a member given twice"),
                      ('{"ph":"s","pid":4243,"ts":1.000,"id":%d}' % (2 ** 53 - 1), "line 7: an id too large"),
                      ('[1]', "line 7: not a JSON object")):
        r1.write(tmp("bad.json.gz"), damage=(7, line))
        refused([good, "bad.json.gz", "-o", "m.json.gz"], "gpuprof: bad.json.gz: " + why, why)
    # a meta that fails analyze's checks (the trace library's, one reading of
    # gpuprof.meta for every command): refused as analyze refuses it
    meta = r1.lines()[0]
    for bad, why in ((meta.replace('"format":1', '"format":2', 1), "trace format 2 (this gpuprof reads"),
                     (meta.replace('"rank":1,', '"rank":"1",', 1), 'gpuprof.meta event: "rank" is not a')):
        check(bad != meta, "the meta changed: " + why)
        r1.write(tmp("badmeta.json.gz"), damage=(2, bad))
        refused([good, "badmeta.json.gz", "-o", "m.json.gz"], "gpuprof: badmeta.json.gz:2: " + why, why)
    # no trace at all
    with gzip.open(tmp("notrace.json.gz"), "wt") as f:
        f.write('{"a":1}\n')
    refused(["notrace.json.gz", "-o", "m.json.gz"], "notrace.json.gz", "no trace")
    # an existing output: refused, kept; --force replaces it
    open(tmp("m.json.gz"), "w").write("keep")
    refused([good, "-o", "m.json.gz"], "gpuprof: m.json.gz already exists (--force replaces it)", "exists")
    eq(open(tmp("m.json.gz")).read(), "keep", "existing output kept")
    run([good, "-o", "m.json.gz", "--force"])
    read_merged(tmp("m.json.gz"))
    # usage
    for args, want in (([good], "missing -o PATH"), (["-o", "x.json.gz"], "missing TRACE or RUN"),
                       ([good, "-o", "x.txt"], "-o takes a name ending .json.gz"),
                       ([good, "-o", "x.json.gz", "--align", "ntp"], "--align takes wall or collectives"),
                       ([good, "-o", "x.json.gz", "--bogus"], "unknown option '--bogus'")):
        p = run(args, expect=2)
        check(want in p.stderr and "Try 'gpuprof merge --help'." in p.stderr, "%s: %s" % (args, p.stderr))
    p = run(["--help"])
    for part in ("USAGE", "OPTIONS", "EXIT STATUS", "EXAMPLES", "gpuprof merge run/ -o merged.json.gz",
                 "gpuprof merge run/ --align collectives -o merged.json.gz", "https://ui.perfetto.dev"):
        check(part in p.stdout, "--help: " + part)


if __name__ == "__main__":
    sys.exit(checks.main(globals(), "gpuprof-merge."))
