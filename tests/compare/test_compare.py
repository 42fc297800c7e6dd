"""Tests of `gpuprof compare` and `gpuprof check` (viewer/compare/) on
synthetic traces with known answers (tests/analyze/synth.py) and the
summaries `gpuprof analyze --json` makes of them, on bad input, and
against golden reports.

  test_compare.py GPUPROF TEST [--update]

TEST is one of the functions named test_* below, without the prefix.
--update rewrites the golden files (golden/) instead of comparing.
Exit 0 when every check passed, 1 otherwise."""
import copy
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "analyze"))
import checks  # noqa: E402
import synth  # noqa: E402
from checks import check, eq, report  # noqa: E402

KiB, MiB, GiB = synth.KiB, synth.MiB, synth.GiB
GP = None
TMP = None




def gp(*args):
    p = subprocess.run([GP] + list(args), cwd=TMP, capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def compare(*args):
    return gp("compare", *args)


def compare_json(*args, rc=None):
    code, out, err = compare("--format", "json", *args)
    if rc is not None:
        eq(code, rc, "compare %s: exit status (stderr %s)" % (" ".join(args), err.strip()))
    try:
        return code, json.loads(out), err
    except ValueError:
        check(False, "compare %s: JSON on stdout, got %r" % (" ".join(args), out[:300]))
        return code, None, err


def check_cmd(*args):
    return gp("check", *args)


def gp_json(cmd, *args):
    code, out, err = gp(cmd, "--format", "json", *args)
    return code, json.loads(out) if out.startswith("{") else None, err


def one_line(err, prefix, what):
    lines = err.splitlines()
    return check(len(lines) == 1 and lines[0].startswith(prefix),
                 "%s: one '%s' line on stderr, got %r" % (what, prefix, err[:400]))


def path(name):
    return os.path.join(TMP, name)


def write(sim, name, ppid=None, **kw):
    """sim's trace as the recorder writes it; ppid: the parent the meta says."""
    if ppid is None:
        sim.write(path(name), **kw)
        return name
    lines = sim.lines(**kw)
    meta = json.loads(lines[0])
    meta["args"]["ppid"] = ppid
    lines[0] = json.dumps(meta, separators=(",", ":"))
    with gzip.open(path(name), "wb") as f:
        f.write(("[\n" + ",\n".join(lines) + "\n]\n").encode())
    return name


def run_train(name, **kw):
    """The toy training loop of synth.py in one process, pid 4242, cuda:0."""
    opts = dict(kw)
    sim = synth.Sim(**{k: opts.pop(k) for k in list(opts) if k in ("pid", "device", "cmdline", "mode",
                                                                    "total", "ts_base")})
    synth.train(sim, opts.pop("steps", 6), **opts)
    return write(sim, name)


def summarize(trace, name=None, *extra):
    name = name or re.sub(r"\.json(\.gz)?$", "", trace) + ".summary.json"
    rc, out, err = gp("analyze", "--json", *(list(extra) + [trace]))
    eq(rc, 0, "analyze %s (%s)" % (trace, err.strip()))
    with open(path(name), "w") as f:
        f.write(out)
    return name



def pair(doc, i=0):
    return doc["pairs"][i]


def rows(arr):
    return {r["name"]: r["change"] for r in arr or []}


# ---- the tests ----

def test_pass():
    """The same program twice: unchanged; a small growth within the limit."""
    run_train("base.json.gz")
    run_train("same.json.gz")
    run_train("bit.json.gz", act=(97 * MiB, 48 * MiB))
    base_sum = summarize("base.json.gz")
    for base in ("base.json.gz", base_sum):
        rc, doc, err = compare_json(base, "same.json.gz", rc=0)
        p = pair(doc)
        eq((p["verdict"], p["change"], doc["verdict"]), ("unchanged", 0, "ok"), base + ": unchanged")
        eq(p["matched_by"], "device and command", "matched by device and command")
        eq(p["base"]["value"], 504 * MiB + 512, "the peak of allocated memory (with the 512 B loss)")
        eq((p["categories"], p["layers"], p["allocations"]), ([], [], []), "nothing changed")
        eq(err, "", "nothing on stderr")
    with open(path(base_sum), "rb") as f, gzip.open(path("base.summary.json.gz"), "wb") as g:
        g.write(f.read())
    rc, doc, err = compare_json("base.summary.json.gz", "same.json.gz", rc=0)
    eq(pair(doc)["verdict"], "unchanged", "a gzipped summary")
    rc, doc, _ = compare_json(base_sum, "bit.json.gz", rc=0)
    p = pair(doc)
    eq((p["verdict"], p["change"]), ("grew", 1 * MiB), "1 MiB more: within the limit")
    eq(p["allowed"], max((504 * MiB + 512) // 100, 2 * MiB), "default limit: 1% and 2 MiB")
    eq(doc["limit"], {"percent": 1.0, "bytes": 2 * MiB}, "the limit in the report")
    rc, out, _ = compare(base_sum, "bit.json.gz")
    eq(rc, 0, "text: exit status")
    check(out.startswith("ok: peak allocated grew within the limit\n"), "text: verdict first: %r" % out[:80])
    rc, out, _ = compare(base_sum, "same.json.gz", "--format", "markdown")
    check(out.startswith("<!-- gpuprof-compare -->\n### ✅ GPU memory: peak allocated unchanged"),
          "markdown: verdict heading")


def test_fail():
    """Activations of fc1 doubled: a regression, said where."""
    run_train("base.json.gz")
    run_train("big.json.gz", act=(192 * MiB, 48 * MiB))
    base = summarize("base.json.gz")
    rc, doc, err = compare_json(base, "big.json.gz", rc=1)
    p = pair(doc)
    eq(doc["verdict"], "regression", "verdict")
    eq((p["verdict"], p["change"]), ("regression", 96 * MiB), "96 MiB more")
    eq(p["change_percent"], round(100 * 96 * MiB / (504 * MiB + 512), 4), "in percent")
    eq(rows(p["categories"]), {"activations": 96 * MiB}, "by category")
    eq(rows(p["layers"]), {"<Net>.fc1": 96 * MiB}, "by layer")
    a = p["allocations"]
    eq([(x["layer"], x["category"], x["phase"], x["base"], x["new"], x["change"], x["exact"]) for x in a],
       [("<Net>.fc1", "activations", "forward", 96 * MiB, 192 * MiB, 96 * MiB, True)], "by allocation")
    eq(err, "", "nothing on stderr")
    rc, out, _ = compare(base, "big.json.gz")
    eq(rc, 1, "text: exit 1")
    check(out.startswith("REGRESSION: peak allocated grew beyond the limit on 1 of 1 GPU\n"), "text verdict")
    check(re.search(r"cuda:0 +504 MiB +600 MiB +\+96\.0 MiB +\+19\.0%", out), "text: before, after, change")
    check(re.search(r"<Net>\.fc1 +104 MiB +200 MiB +\+96\.0 MiB", out), "text: the layer that grew")
    # limits
    for limit, want in ((["--max-increase", "20%"], 0), (["--max-increase", "50MiB"], 1),
                        (["--max-increase", "20%", "--max-increase", "50MiB"], 0),
                        (["--max-increase", "19%", "--max-increase", "97MiB"], 0),
                        (["--max-increase", "19%", "--max-increase", "95MiB"], 1),
                        (["--max-increase", "96MiB"], 0), (["--max-increase", "%dB" % (96 * MiB - 1)], 1),
                        (["--max-increase", "0"], 1), (["--max-increase", "0%"], 1),
                        (["--max-increase", "0.1GiB"], 0),
                        # 96 MiB = 100.66 MB
                        (["--max-increase", "100MB"], 1), (["--max-increase", "101MB"], 0),
                        (["--max-increase", "0.1G"], 1), (["--max-increase", "0.101G"], 0)):
        rc, _, err = compare(*([base, "big.json.gz"] + limit))
        eq(rc, want, "limit %s" % " ".join(limit))
    rc, out, _ = compare(base, "big.json.gz", "--max-increase", "100MB")
    check("  fails    an increase of more than 100 MB = 95.4 MiB (--max-increase)\n" in out,
          "text: a decimal limit in both units")
    rc, doc, _ = compare_json(base, "big.json.gz", "--max-increase", "0", rc=1)
    eq(doc["limit"], {"percent": None, "bytes": 0}, "--max-increase 0: any increase fails")
    # a summary with a short list of allocations: what is not in it is not
    # known. cuBLAS's workspace is not PyTorch's: alive at the peak, not in
    # peak allocated
    short = summarize("base.json.gz", "short.summary.json", "--top", "3")
    run_train("cublas.json.gz", cublas=72 * MiB)
    rc, doc, _ = compare_json(short, "cublas.json.gz", rc=0)
    eq((pair(doc)["verdict"], rows(pair(doc)["categories"])), ("unchanged", {"other: cudaMalloc": 64 * MiB}),
       "a larger workspace: not in peak allocated, but shown")
    a = [x for x in pair(doc)["allocations"] if x["category"] == "other"]
    check(len(a) == 1 and a[0]["base"] is None and a[0]["base_at_most"] == 64 * MiB
          and a[0]["change"] == 8 * MiB and not a[0]["exact"],
          "an allocation under BASE's cut: at most 64 MiB before, at least +8 MiB: %r" % a)
    rc, out, _ = compare(short, "cublas.json.gz")
    check(re.search(r"<= 64\.0 MiB +72\.0 MiB +>= \+8\.00 MiB", out), "text: the bound")


def test_phase_label():
    """Memory made in no phase: the moment leaves the phase out, an
    allocation's description says "(no phase)", as analyze's text does."""
    for name, size in (("plain_base.json.gz", 100 * MiB), ("plain_new.json.gz", 300 * MiB)):
        sim = synth.Sim()
        sim.torch_info()
        sim.alloc(size, "other")
        write(sim, name)
    rc, out, _ = compare("plain_base.json.gz", "plain_new.json.gz")
    eq(rc, 1, "a regression")
    check(re.search(r"^  BASE  100 MiB allocated at 0\.001 s; ", out, re.M), "the moment without none:\n%s" % out)
    check(re.search(r"^    \(no module\), other: .*, \(no phase\) +100 MiB +300 MiB", out, re.M),
          "the allocation's phase, (no phase):\n%s" % out)
    check(not re.search(r"\bnone\b", out), "no phase called none")


def test_improvement():
    """NEW smaller: exit 0, said."""
    run_train("big.json.gz", act=(192 * MiB, 48 * MiB))
    run_train("base.json.gz")
    rc, doc, _ = compare_json("big.json.gz", "base.json.gz", rc=0)
    p = pair(doc)
    eq((doc["verdict"], p["verdict"], p["change"]), ("ok", "shrank", -96 * MiB), "smaller")
    eq(rows(p["layers"]), {"<Net>.fc1": -96 * MiB}, "where it shrank")
    rc, out, _ = compare("big.json.gz", "base.json.gz")
    check(out.startswith("ok: peak allocated shrank: consider making NEW the baseline"), "said: %r" % out[:90])
    check("ok: smaller" in out, "verdict column")


def torchrun(stem, acts, pid0=5000, cmdline="python3 train.py", devices=None, ppid_root=True):
    """A torchrun-like run: worker k on cuda:k, its activations acts[k]; the
    first one's trace is STEM.json.gz, the others' STEM.PID.json.gz."""
    names = []
    for k, act in enumerate(acts):
        dev = devices[k] if devices else k
        sim = synth.Sim(pid=pid0 + k, device=dev, cmdline=cmdline)
        synth.train(sim, 3, act=(act, 48 * MiB))
        name = "%s.json.gz" % stem if k == 0 else "%s.%d.json.gz" % (stem, pid0 + k)
        names.append(write(sim, name, ppid=pid0 if ppid_root and k else None))
    return names


def test_missing():
    """A GPU of BASE that NEW lacks fails; one only in NEW is reported."""
    torchrun("base", [96 * MiB, 96 * MiB])
    torchrun("one", [96 * MiB], pid0=6000)
    rc, doc, err = compare_json("base.json.gz", "one.json.gz", rc=1)
    eq(doc["base"]["inputs"], ["base.json.gz", "base.5001.json.gz"], "the child trace comes with its run")
    eq([(p["device"], p["verdict"]) for p in doc["pairs"]], [(0, "unchanged"), (1, "missing")],
       "cuda:1 is missing in NEW")
    rc, out, _ = compare("base.json.gz", "one.json.gz")
    check(out.startswith("REGRESSION: 1 GPU of BASE is missing in NEW"), "text: %r" % out[:80])
    check(re.search(r"\n  cuda:1 +504 MiB +- +- +- +FAIL: missing in NEW\n", out), "text: the missing row")
    torchrun("three", [96 * MiB] * 3, pid0=7000)
    rc, doc, _ = compare_json("base.json.gz", "three.json.gz", rc=0)
    eq([(p["device"], p["verdict"]) for p in doc["pairs"]], [(0, "unchanged"), (1, "unchanged"), (2, "new_only")],
       "cuda:2 only in NEW: reported, not a failure")
    rc, out, _ = compare("base.json.gz", "three.json.gz", "--format", "markdown")
    check("| only in NEW (not compared) |" in out, "markdown: the new row")
    # NEW with no GPU memory activity at all: every GPU is missing
    sim = synth.Sim(pid=8000)
    open(path("empty.json"), "w").write("[\n" + ",\n".join(sim.lines()) + "\n]\n")
    rc, doc, _ = compare_json("base.json.gz", "empty.json", rc=1)
    eq([p["verdict"] for p in doc["pairs"]], ["missing", "missing"], "NEW allocated nothing")
    rc, out, err = compare("empty.json", "base.json.gz")
    eq(rc, 2, "BASE allocated nothing: no verdict")
    one_line(err, "gpuprof compare: BASE: no GPU memory activity", "empty BASE")
    # a run whose first process wrote no trace (torchrun's launcher): said
    shutil.copy(path("base.5001.json.gz"), path("nope.5001.json.gz"))
    rc, out, err = compare("nope.json.gz", "base.json.gz")
    eq(rc, 2, "no such file")
    one_line(err, "gpuprof compare: nope.json.gz: No such file or directory (but nope.5001.json.gz is there",
             "no root trace")
    # --device: one GPU of each process only
    rc, doc, _ = compare_json("base.json.gz", "one.json.gz", "--device", "0", rc=0)
    eq([p["device"] for p in doc["pairs"]], [0], "--device 0")


def test_matching():
    """Processes matched by device and command, start order, rank; directories, --base/--new, child
    traces; unmatched processes."""
    # torchrun workers on two GPUs; the one on cuda:1 grew; pids all differ
    torchrun("base", [96 * MiB, 96 * MiB])
    torchrun("new", [96 * MiB, 192 * MiB], pid0=6000)
    rc, doc, _ = compare_json("base.json.gz", "new.json.gz", rc=1)
    got = [(p["device"], p["base"]["pid"], p["new"]["pid"], p["matched_by"], p["verdict"]) for p in doc["pairs"]]
    eq(got, [(0, 5000, 6000, "device and command", "unchanged"), (1, 5001, 6001, "device and command", "regression")],
       "matched by device and command")
    # the same as directories, and with --base/--new one file each
    os.makedirs(path("b"))
    os.makedirs(path("n"))
    for f in ("base.json.gz", "base.5001.json.gz"):
        shutil.copy(path(f), path("b"))
    for f in ("new.json.gz", "new.6001.json.gz"):
        shutil.copy(path(f), path("n"))
    for args in (["b", "n"], ["--base", "b/base.json.gz", "--base", "b/base.5001.json.gz", "n"],
                 ["--new", "n/new.6001.json.gz", "--new", "n/new.json.gz", "b"],
                 ["--base", summarize("base.json.gz", "s0.json"), "--base",
                  summarize("base.5001.json.gz", "s1.json"), "--new", "n"]):
        rc, doc, err = compare_json(*args, rc=1)
        if doc:
            eq([(p["device"], p["verdict"]) for p in doc["pairs"]], [(0, "unchanged"), (1, "regression")],
               "sides given as %s" % " ".join(args))
    # the same process twice on one side (a summary and its trace)
    rc, _, err = compare("--base", "base.json.gz", "--base", "s0.json", "new.json.gz")
    eq(rc, 2, "one process twice in BASE")
    one_line(err, "gpuprof compare: BASE: process 5000 (GPU 0) is in both", "one process twice")
    # a trace named like a child's but of another run is left out, and said
    shutil.copy(path("new.6001.json.gz"), path("base.7.json.gz"))
    rc, doc, err = compare_json("base.json.gz", "new.json.gz", rc=1)
    check("base.7.json.gz" not in doc["base"]["inputs"], "base.7.json.gz is not BASE's")
    check(any("base.7.json.gz is named like the trace of a child" in n for n in doc["notes"]), "and said")
    os.unlink(path("base.7.json.gz"))
    # the command changed: matched by device, said
    run_train("a.json.gz", cmdline="python3 train.py --bs 8")
    run_train("b.json.gz", cmdline="python3 train.py --bs 16", act=(192 * MiB, 48 * MiB))
    rc, doc, _ = compare_json("a.json.gz", "b.json.gz", rc=1)
    p = pair(doc)
    eq(p["matched_by"], "device (the command differs)", "matched by device alone")
    check(any("command lines differ" in n for n in p["notes"]), "the command change is said")
    # two processes on one GPU each side, every command different: nothing matches
    for stem, cmds, pid0 in (("x", ["python3 a.py", "python3 b.py"], 5000), ("y", ["python3 c.py", "python3 d.py"], 6000)):
        for k, cmd in enumerate(cmds):
            sim = synth.Sim(pid=pid0 + k, cmdline=cmd)
            synth.train(sim, 2)
            write(sim, "%s.json.gz" % stem if k == 0 else "%s.%d.json.gz" % (stem, pid0 + k), ppid=pid0 if k else None)
    rc, doc, _ = compare_json("x.json.gz", "y.json.gz", rc=1)
    eq(sorted(p["verdict"] for p in doc["pairs"]), ["missing", "missing", "new_only", "new_only"],
       "unmatched processes: missing in NEW and only in NEW")
    # two processes with one command on one GPU: taken in the order they started
    torchrun("s", [96 * MiB, 96 * MiB], devices=[0, 0])
    torchrun("t", [96 * MiB, 120 * MiB], pid0=6000, devices=[0, 0])
    rc, doc, _ = compare_json("s.json.gz", "t.json.gz", rc=1)
    eq([(p["base"]["pid"], p["new"]["pid"], p["matched_by"]) for p in doc["pairs"]],
       [(5000, 6000, "device, command and start order"), (5001, 6001, "device, command and start order")],
       "start order")
    # the rank, where a summary has it (not in gpuprof.analyze/1 yet): wins over the order
    sb = json.load(open(path(summarize("s.json.gz", "s.sum.json", "s.5001.json.gz"))))
    st = json.load(open(path(summarize("t.json.gz", "t.sum.json", "t.6001.json.gz"))))
    for doc_, ranks in ((sb, {5000: 0, 5001: 1}), (st, {6000: 1, 6001: 0})):
        for t in doc_["traces"]:
            t["rank"] = ranks[t["pid"]]
    json.dump(sb, open(path("s.rank.json"), "w"))
    json.dump(st, open(path("t.rank.json"), "w"))
    rc, doc, _ = compare_json("s.rank.json", "t.rank.json", rc=1)
    eq([(p["base"]["rank"], p["new"]["rank"], p["matched_by"]) for p in doc["pairs"]],
       [(0, 0, "rank and device"), (1, 1, "rank and device")], "matched by rank")
    eq([p["verdict"] for p in doc["pairs"]], ["regression", "unchanged"], "rank 0 (pid 6001) grew")


def test_metric():
    """--metric across modes; not known: exit 2 with what to do."""
    synth.scenario("native", TMP)
    synth.scenario("train", TMP)
    sim = synth.Sim(mode="native", total=8 * GiB)
    sim.torch_info()
    sim.alloc(20 * MiB, "parameters")
    sim.mark("step:1")
    sim.name_segments()
    write(sim, "native_nomarks.json.gz")
    rc, doc, _ = compare_json("native.json.gz", "native.json.gz", rc=0)
    eq((pair(doc)["what"], pair(doc)["base"]["value"]), ("peak reserved", 62 * MiB),
       "native mode: the peak is of reserved memory")
    rc, doc, _ = compare_json("native.json.gz", "native.json.gz", "--metric", "peak-allocated", rc=0)
    eq((pair(doc)["what"], pair(doc)["base"]["value"]), ("peak allocated", 30 * MiB),
       "peak allocated from PyTorch's marks")
    check(any("alive at the peak analyze reports, of reserved memory" in n for n in pair(doc)["notes"]),
          "the breakdown is at the other peak: said")
    rc, out, err = compare("native_nomarks.json.gz", "native_nomarks.json.gz", "--metric", "peak-allocated")
    eq(rc, 2, "peak allocated not known")
    one_line(err, "gpuprof compare: BASE: native_nomarks.json.gz: peak allocated is not known", "not known")
    check("--metric peak-reserved" in err, "and what to do")
    eq(out, "", "nothing on stdout")
    rc, out, err = compare("native.json.gz", "train.json.gz")
    eq(rc, 2, "tensor against native mode")
    one_line(err, "gpuprof compare: GPU 0: BASE's peak is of reserved memory (native mode), NEW's of "
             "allocated memory (tensor mode)", "modes differ")
    rc, doc, _ = compare_json("native.json.gz", "train.json.gz", "--metric", "peak-reserved", rc=1)
    check(any("traced in native mode, NEW in tensor mode" in n for n in pair(doc)["notes"]),
          "an explicit metric across modes: said")
    synth.scenario("cuda", TMP)
    # the program died of its failed allocation: allowed here
    rc, doc, _ = compare_json("cuda.json.gz", "cuda.json.gz", "--allow-oom", rc=0)
    eq(pair(doc)["what"], "peak device memory", "cuda mode")
    eq(pair(doc)["categories"], None, "no categories in cuda mode")
    rc, out, err = compare("cuda.json.gz", "cuda.json.gz", "--metric", "peak-reserved", "--allow-oom")
    eq(rc, 2, "cuda mode without pools: reserved not known")


def bad_summaries(good):
    """(name, document or text) pairs, each wrong in one way."""
    def mut(fn):
        d = copy.deepcopy(good)
        fn(d)
        return d

    dev = lambda d: d["devices"][0]  # noqa: E731
    peak = lambda d: d["devices"][0]["peak"]  # noqa: E731
    yield "not_json", "this is not JSON\n"
    yield "truncated", json.dumps(good)[:500]
    yield "trailing", json.dumps(good) + " x"
    yield "nan", json.dumps(good).replace('"time_origin_ns": 1700000000000000000', '"time_origin_ns": NaN')
    yield "number", "42"
    yield "array_of_numbers", "[1, 2, 3]"
    yield "bad_utf8", json.dumps(good).replace('"synth"', '"s\udcff"', 1)
    yield "nul", json.dumps(good).replace('"synth"', '"s\\u0000h"', 1)
    yield "deep", "{" + '"a":[' * 5000 + "]" * 5000 + "}"
    yield "no_schema", mut(lambda d: d.pop("schema"))
    yield "schema_2", mut(lambda d: d.update(schema="gpuprof.analyze/2"))
    yield "schema_other", mut(lambda d: d.update(schema="gpuprof.compare/1"))
    yield "schema_number", mut(lambda d: d.update(schema=1))
    yield "devices_object", mut(lambda d: d.update(devices={}))
    yield "device_null", mut(lambda d: d["devices"].__setitem__(0, None))
    yield "device_index_64", mut(lambda d: dev(d).update(device=64))
    yield "device_negative", mut(lambda d: dev(d).update(device=-1))
    yield "trace_out_of_range", mut(lambda d: dev(d).update(trace=5))
    yield "pid_mismatch", mut(lambda d: dev(d).update(pid=1))
    yield "pid_string", mut(lambda d: dev(d).update(pid="4242"))
    yield "mode_bogus", mut(lambda d: dev(d).update(mode="bogus"))
    yield "peak_string", mut(lambda d: peak(d).update(bytes="528482816"))
    yield "peak_negative", mut(lambda d: peak(d).update(bytes=-1))
    yield "peak_float", mut(lambda d: peak(d).update(bytes=5.5))
    yield "peak_huge", mut(lambda d: peak(d).update(bytes=2 ** 63))
    yield "peak_u64", mut(lambda d: peak(d).update(bytes=2 ** 64 - 1))
    yield "peak_absurd", mut(lambda d: peak(d).update(bytes=2 ** 53 + 1))
    yield "peak_1e300", json.dumps(mut(lambda d: peak(d).update(bytes=12345678))).replace("12345678", "1e300")
    yield "t_string", mut(lambda d: peak(d).update(t="0.04"))
    yield "what_bogus", mut(lambda d: peak(d).update(what="everything"))
    yield "allocated_null_known", mut(lambda d: dev(d)["summary"]["allocated"].update(peak=None))
    yield "summary_missing", mut(lambda d: dev(d).pop("summary"))
    yield "layer_children_more", mut(lambda d: peak(d)["by_layer"][1].update(bytes=1))
    yield "layer_name_number", mut(lambda d: peak(d)["by_layer"][0].update(name=3))
    yield "layer_children_object", mut(lambda d: peak(d)["by_layer"][1].update(children={}))
    yield "top_missing_layer", mut(lambda d: peak(d)["top"][0].pop("layer"))
    yield "top_not_object", mut(lambda d: peak(d)["top"].append(7))
    yield "category_by_sum", mut(lambda d: [c for c in peak(d)["by_category"]
                                            if c["category"] == "other"][0].update(bytes=1))
    yield "cut_short_string", mut(lambda d: d["traces"][0].update(cut_short="no"))
    yield "rank_string", mut(lambda d: d["traces"][0].update(rank="0"))
    yield "options_missing", mut(lambda d: d.pop("options"))
    one_oom = {"step": 3, "request": GiB, "phase": None, "layer": None, "recovered": False, "raised": False,
               "fatal": True}
    outcomes = {"fatal": 1, "later_steps": 0, "caught": 0, "retried": 0}
    yield "oom_outcomes_sum", mut(lambda d: dev(d).update(oom_outcomes=outcomes))
    yield "oom_outcomes_string", mut(lambda d: dev(d).update(oom_count=1, ooms=[one_oom],
                                                             oom_outcomes=dict(outcomes, fatal="1")))
    yield "oom_fatal_string", mut(lambda d: dev(d).update(oom_count=1, oom_outcomes=outcomes,
                                                          ooms=[dict(one_oom, fatal="yes")]))
    yield "oom_fatal_missing", mut(lambda d: dev(d).update(oom_count=1, oom_outcomes=outcomes,
                                                           ooms=[{k: v for k, v in one_oom.items() if k != "fatal"}]))
    yield "ooms_too_many", mut(lambda d: dev(d).update(oom_count=100, ooms=[one_oom] * 100,
                                                       oom_outcomes=dict(outcomes, fatal=100)))
    yield "oom_left_out_more", mut(lambda d: dev(d).update(oom_count=1, ooms=[], ooms_left_out={
        "count": 2, "recovered": 0, "raised": 0, "released": 0, "retries": 0}) or dev(d).pop("oom_outcomes"))
    deep_tree = {"name": "x", "bytes": 1, "count": 1}
    for _ in range(70):
        deep_tree = {"name": "x", "bytes": 1, "count": 1, "children": [deep_tree]}
    yield "layer_tree_deep", mut(lambda d: peak(d)["by_layer"].append(deep_tree))


def mutations(good):
    """Every member of the document, one at a time: removed, or given each
    of a few wrong values. What compare does not use may stay wrong; what it
    uses must give exit 2; nothing may crash."""
    bad_values = [None, "x", -1, 2 ** 60, [], {}]

    def walk(node, trail):
        if isinstance(node, dict):
            for k in list(node):
                yield trail + [k]
                yield from walk(node[k], trail + [k])
        elif isinstance(node, list):
            for i, x in enumerate(node[:2]):
                yield trail + [i]
                yield from walk(x, trail + [i])

    for trail in walk(good, []):
        if trail[:1] == ["devices"] and len(trail) > 2 and trail[2] in ("steps", "leak", "ooms"):
            continue
        for v in bad_values + ["<del>"]:
            d = copy.deepcopy(good)
            node = d
            for k in trail[:-1]:
                node = node[k]
            if v == "<del>":
                if isinstance(node, list):
                    continue
                del node[trail[-1]]
            else:
                node[trail[-1]] = v
            yield "/".join(map(str, trail)) + "=" + repr(v), d


def test_bad():
    """Bad files and summaries (each member wrong in turn): exit 2, one line."""
    run_train("base.json.gz")
    good = json.load(open(path(summarize("base.json.gz", "good.json"))))
    for name, doc in bad_summaries(good):
        f = path("bad_%s.json" % name)
        with open(f, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(doc if isinstance(doc, str) else json.dumps(doc))
        for cmd, args in (("compare", [f, "base.json.gz"]), ("compare", ["base.json.gz", f]),
                          ("check", [f, "--max-peak", "1GiB"])):
            rc, out, err = gp(cmd, *args)
            eq(rc, 2, "%s %s: exit status" % (cmd, name))
            eq(out, "", "%s %s: nothing on stdout" % (cmd, name))
            one_line(err, "gpuprof %s: " % cmd, "%s %s" % (cmd, name))
    # files that are no input at all
    open(path("empty"), "w").close()
    os.makedirs(path("nothing_here"))
    open(path("nothing_here/readme.txt"), "w").write("x")
    open(path("junk.json"), "w").write("junk")
    cases = ["missing.json", "empty", "nothing_here", "junk.json", "/dev/null"]
    bad_dir = os.path.join(ROOT, "tests", "analyze", "bad")
    cases += [os.path.join(bad_dir, c) for c in sorted(os.listdir(bad_dir))]
    for c in cases:
        for args in ([c, "base.json.gz"], ["base.json.gz", c]):
            rc, out, err = compare(*args)
            eq(rc, 2, "%s: exit status" % " ".join(args))
            eq(out, "", "%s: nothing on stdout" % " ".join(args))
            one_line(err, "gpuprof compare: ", " ".join(args))
    # one member at a time: wrong, absent; exit 2 or a verdict, never a crash
    n = 0
    for name, doc in mutations(good):
        f = path("mut.json")
        json.dump(doc, open(f, "w"))
        rc, out, err = compare(f, "base.json.gz")
        n += 1
        if not check(rc in (0, 1, 2), "mutation %s: exit status %d, stderr %r" % (name, rc, err[-500:])):
            continue
        if rc == 2:
            one_line(err, "gpuprof compare: ", "mutation %s" % name)
            eq(out, "", "mutation %s: nothing on stdout" % name)
        else:
            check("ERROR" not in err and "runtime error" not in err, "mutation %s: %r" % (name, err[-300:]))
    check(n > 200, "mutations tried: %d" % n)


def test_schema_reader():
    """The summary reader checks what viewer/analyze/result/result_schema.def says
    it reads: a member marked REQ may be neither absent nor null, one marked
    NUL not absent, and neither may have a value of another type; each
    exits 2 with one line that names the member."""
    sys.path.insert(0, os.path.join(ROOT, "viewer", "analyze", "result"))
    import result_schema as rs

    def at(doc, where):
        node = doc
        for part in where.split("."):
            if part == "(top)":
                continue
            key, arr = (part[:-2], True) if part.endswith("[]") else (part, False)
            node = node.get(key) if isinstance(node, dict) else None
            if arr:
                node = node[0] if isinstance(node, list) and node else None
            if node is None:
                return None
        return node if isinstance(node, dict) else None

    run_train("base.json.gz")
    good = json.load(open(path(summarize("base.json.gz", "good.json"))))
    wrong_type = {"string": 7, "integer": "7", "number": "7", "boolean": "yes", "object": 7, "array": 7}
    tried = 0
    for o in rs.load().values():
        where = o.paths[0]
        if at(good, where) is None:
            continue
        for m in o.members.values():
            if m.read not in ("REQ", "NUL") or m.key not in at(good, where):
                continue
            cases = [("absent", None), ("of another type", wrong_type[m.json])]
            if m.read == "REQ":
                cases.append(("null", "null"))
            for how, value in cases:
                doc = copy.deepcopy(good)
                obj = at(doc, where)
                if how == "absent":
                    del obj[m.key]
                else:
                    obj[m.key] = None if value == "null" else value
                f = path("schema_reader.json")
                json.dump(doc, open(f, "w"))
                rc, out, err = compare(f, f)
                tried += 1
                what = "%s.%s %s" % (where, m.key, how)
                eq(rc, 2, what + ": exit status")
                one_line(err, "gpuprof compare: ", what)
                check("'%s'" % m.key in err, "%s: the message names it: %r" % (what, err))
    check(tried > 60, "members tried: %d" % tried)


def test_cli():
    """Options, strict limits, their errors, --help, a full stdout."""
    run_train("base.json.gz")
    for args, why in (([], "no operands"), (["base.json.gz"], "one operand"),
                      (["base.json.gz"] * 3, "three operands"),
                      (["--base", "base.json.gz"], "--base without NEW"),
                      (["--base", "base.json.gz", "--new", "base.json.gz", "base.json.gz"], "an extra operand"),
                      (["--base", "base.json.gz", "base.json.gz", "base.json.gz"], "two operands with --base"),
                      (["", "base.json.gz"], "an empty name"),
                      (["--bogus", "base.json.gz", "base.json.gz"], "unknown option"),
                      (["-x", "base.json.gz", "base.json.gz"], "unknown short option"),
                      (["base.json.gz", "base.json.gz", "--max-increase"], "no value"),
                      (["base.json.gz", "base.json.gz", "--help=1"], "--help=1"),
                      (["base.json.gz", "base.json.gz", "--max-increase", "1%", "--max-increase", "2%"],
                       "two percentages"),
                      (["base.json.gz", "base.json.gz", "--max-increase", "1MiB", "--max-increase", "2MiB"],
                       "two sizes"),
                      (["base.json.gz", "base.json.gz", "--metric", "peak-total"], "--metric"),
                      (["base.json.gz", "base.json.gz", "--format", "html"], "--format"),
                      (["base.json.gz", "base.json.gz", "--device", "64"], "--device 64"),
                      (["base.json.gz", "base.json.gz", "--device", "-1"], "--device -1"),
                      (["base.json.gz", "base.json.gz", "--top", "0"], "--top 0"),
                      (["base.json.gz", "base.json.gz", "--top", "1001"], "--top 1001")):
        rc, out, err = compare(*args)
        eq(rc, 2, why + ": exit status")
        eq(out, "", why + ": nothing on stdout")
        check(err.startswith("gpuprof compare: ") and err.endswith("Try 'gpuprof compare --help'.\n"),
              why + ": message %r" % err)
    good = ["2%", "0.5%", "1000%", "0%", "256MiB", "1.5GiB", "0", "4096B", "1TiB", "100KiB", "7B",
            "1.125GiB", "0.001KiB", "8192TiB", "256MB", "256M", "80GB", "12G", "1.5kB", "2KB", "3k",
            "4K", "1TB", "9007T", "512Mi", "70Gi"]
    junk = ["", "2 %", " 2%", "2%%", "%", "-1%", "+1%", "1e3", "abc", "256mb", "256Mb", "256mB", "12g",
            "256MIB", "256mib", "1.5", "1.5B", "1.5b", ".5GiB", "1.GiB", "1.0001GiB", "1.0001GB", "0x10",
            "1,5GiB", "2% ", "1001%", "8193TiB", "9008TB", "99999999999999999", "1 GiB", "1 GB", "GiB",
            "GB", "4096", "5", "0.0", "80GBs", "80Gib", "80iB"]
    for v in good:
        rc, _, err = compare("base.json.gz", "base.json.gz", "--max-increase", v)
        eq(rc, 0, "--max-increase %r accepted (%s)" % (v, err.strip()))
    for v in junk:
        rc, out, err = compare("base.json.gz", "base.json.gz", "--max-increase", v)
        eq(rc, 2, "--max-increase %r refused" % v)
        check(err.startswith("gpuprof compare: --max-increase"), "--max-increase %r: message %r" % (v, err))
    # a bare number: 5% or 5 MiB? The message shows both forms.
    for cmd, opt in (("compare", "--max-increase"), ("check", "--max-peak")):
        rc, out, err = gp(cmd, "base.json.gz", "base.json.gz", opt, "5")
        eq((rc, out), (2, ""), "%s %s 5: refused" % (cmd, opt))
        eq(err.splitlines()[0], "gpuprof %s: %s 5: say 5%%, 5GB or 5GiB (a bare number is ambiguous)"
           % (cmd, opt), "%s %s 5: the message" % (cmd, opt))
    # decimal units are powers of 1000, binary ones of 1024, exactly
    for v, want in (("80GB", 80 * 10**9), ("80G", 80 * 10**9), ("13000MB", 13 * 10**9), ("256M", 256 * 10**6),
                    ("1.5kB", 1500), ("2KB", 2000), ("3k", 3000), ("4K", 4000), ("1.001TB", 1001 * 10**9),
                    ("0.001kB", 1), ("9007T", 9007 * 10**12), ("70GiB", 70 * GiB), ("70Gi", 70 * GiB),
                    ("512Mi", 512 * MiB), ("2Ki", 2048), ("4096B", 4096)):
        rc, doc, _ = compare_json("base.json.gz", "base.json.gz", "--max-increase", v, rc=0)
        eq(doc["limit"], {"percent": None, "bytes": want}, "--max-increase %s is %d bytes" % (v, want))
    rc, doc, _ = compare_json("base.json.gz", "base.json.gz", "--max-increase", "1.5GiB", rc=0)
    eq(doc["limit"], {"percent": None, "bytes": 1536 * MiB}, "1.5GiB")
    rc, doc, _ = compare_json("base.json.gz", "base.json.gz", "--max-increase", "0.001KiB", rc=0)
    eq(doc["limit"]["bytes"], 1, "0.001KiB: a fraction of a byte, rounded down")
    for args, why in ((["base.json.gz"], "no --max-peak"), (["--max-peak", "1GiB"], "no TRACE"),
                      (["base.json.gz", "--max-peak", "1GiB", "--max-peak", "2GiB"], "--max-peak twice"),
                      (["base.json.gz", "--max-peak", "101%"], "over 100%"),
                      (["base.json.gz", "--max-peak", "12 GiB"], "a blank"),
                      (["base.json.gz", "--max-peak", "1GiB", "--top", "x"], "--top x")):
        rc, out, err = gp("check", *args)
        eq(rc, 2, "check " + why + ": exit status")
        eq(out, "", "check " + why + ": nothing on stdout")
        check(err.startswith("gpuprof check: "), "check " + why + ": message %r" % err)
    rc, out, _ = gp("--help")
    for s in ("gpuprof compare BASE NEW", "gpuprof check TRACE..."):
        check(s in out, "--help says %r" % s)
    rc, out, _ = compare("--help")
    for s in ("gpuprof compare BASE NEW", "--max-increase N%|SIZE", "EXIT STATUS\n  0 within the limit, 1 a regression",
              "gpuprof compare baseline.json summary.json --format markdown"):
        check(s in out, "compare --help says %r" % s)
    rc, out2, _ = gp("help", "compare")
    eq((rc, out2), (0, out), "help compare")
    rc, out, _ = gp("check", "--help")
    for s in ("gpuprof check TRACE...", "--max-peak SIZE|N%", "EXIT STATUS\n  0 every GPU's peak within the limit",
              "gpuprof check run.json.gz --max-peak 12GiB"):
        check(s in out, "check --help says %r" % s)
    rc, _, _ = gp("--compare", "base.json.gz", "base.json.gz")
    eq(rc, 0, "gpuprof --compare")
    rc, out, _ = compare("base.json.gz", "--format", "json", "base.json.gz", "--top", "2")
    eq(rc, 0, "options between operands")
    # a report that cannot be written: no verdict
    with open("/dev/full", "w") as full:
        p = subprocess.run([GP, "compare", "base.json.gz", "base.json.gz"], cwd=TMP, stdout=full,
                           stderr=subprocess.PIPE, timeout=60)
    eq(p.returncode, 2, "stdout full: exit 2")
    check(b"gpuprof compare: writing the report" in p.stderr, "said: %r" % p.stderr)


def test_check():
    """gpuprof check: the verdict line, the layers, --device, N% of the GPU."""
    # the example, to the letter
    sim = synth.Sim(total=80 * GiB)
    sim.torch_info()
    sim.alloc(int(13.2 * GiB), "parameters")
    write(sim, "big.json.gz")
    rc, out, _ = gp("check", "big.json.gz", "--max-peak", "12GiB")
    eq(rc, 1, "13.2 GiB against 12 GiB")
    eq(out.splitlines()[0], "FAIL: peak allocated on cuda:0 was 13.2 GiB, limit 12 GiB (1.20 GiB over)",
       "the verdict line")
    run_train("base.json.gz")
    rc, out, err = gp("check", "base.json.gz", "--max-peak", "256MiB")
    eq(rc, 1, "over the limit")
    lines = out.splitlines()
    eq(lines[0], "FAIL: peak allocated on cuda:0 was 504 MiB, limit 256 MiB (248 MiB over)", "the verdict line")
    check(re.search(r"\(no module\) +304 MiB +59\.4%", out), "then the largest layers")
    eq(err, "", "nothing on stderr")
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "12GiB")
    eq(rc, 0, "within the limit")
    eq(out.splitlines()[0], "ok: peak allocated on cuda:0 was 504 MiB, limit 12 GiB (4.1% of it)", "ok line")
    # a limit in a decimal unit: written back in it, and in binary, as read
    for limit, said in (("80GB", "80 GB = 74.5 GiB"), ("12G", "12 GB = 11.2 GiB"),
                        ("13000MB", "13000 MB = 12.1 GiB"), ("1.5GB", "1.5 GB = 1.40 GiB"),
                        ("70GiB", "70 GiB"), ("512MiB", "512 MiB")):
        rc, out, _ = gp("check", "base.json.gz", "--max-peak", limit)
        eq(rc, 0, "--max-peak %s: within" % limit)
        check(out.startswith("ok: peak allocated on cuda:0 was 504 MiB, limit %s (" % said),
              "--max-peak %s: the limit written back: %r" % (limit, out.splitlines()[0]))
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "500MB")
    eq(rc, 1, "504 MiB is over 500 MB (477 MiB)")
    eq(out.splitlines()[0], "FAIL: peak allocated on cuda:0 was 504 MiB, limit 500 MB = 477 MiB (27.2 MiB over)",
       "--max-peak 500MB: the verdict line")
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "500MB", "--format", "markdown")
    check("| 500 MB = 477 MiB |" in out, "Markdown: the limit in both units: %r" % out)
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "%dB" % (504 * MiB + 512))
    eq(rc, 0, "a limit in bytes: exact")
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "%dkB" % ((504 * MiB + 512) // 1000))
    eq(rc, 1, "a limit in kB just under the peak")
    peak = 504 * MiB + 512
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "%dB" % peak)
    eq(rc, 0, "equal to the limit is within it")
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "%dB" % (peak - 1))
    eq(rc, 1, "one byte over")
    check("(1 B over)" in out, "says by how much: %r" % out.splitlines()[0])
    rc, out, _ = gp("check", summarize("base.json.gz"), "--max-peak", "4%")
    eq(rc, 0, "4% of 16 GiB from a summary")
    check("limit 655 MiB" in out, "the limit from the GPU's memory: %r" % out.splitlines()[0])
    rc, out, _ = gp("check", "base.json.gz", "--max-peak", "3%", "--metric", "peak-reserved")
    eq(rc, 1, "the pool (512 MiB) is over 3%")
    check(out.startswith("FAIL: peak reserved on cuda:0 was 512 MiB"), "peak reserved: %r" % out[:60])
    rc, out, err = gp("check", "base.json.gz", "--max-peak", "1GiB", "--device", "3")
    eq(rc, 2, "no such device")
    one_line(err, "gpuprof check: no memory activity on cuda:3 in base.json.gz", "--device 3")
    torchrun("run", [96 * MiB, 600 * MiB])
    rc, out, _ = gp("check", "run.json.gz", "--max-peak", "800MiB")
    eq(rc, 1, "one of two workers over")
    eq([ln.split(" on ")[0] + " on " + ln.split(" on ")[1].split(" was")[0] for ln in out.splitlines()[:2]],
       ["ok: peak allocated on cuda:0", "FAIL: peak allocated on cuda:1"],
       "one verdict line per GPU, first")
    rc, out, _ = gp("check", "run.json.gz", "--max-peak", "800MiB", "--device", "0")
    eq(rc, 0, "--device 0 only")
    rc, doc, _ = 0, None, None
    rc, out, _ = gp("check", "run.json.gz", "--max-peak", "800MiB", "--format", "json")
    doc = json.loads(out)
    eq((doc["schema"], doc["verdict"], [d["over"] for d in doc["devices"]]), ("gpuprof.check/1", "over", [False, True]),
       "JSON")
    eq(doc["devices"][1]["layers"][0], {"name": "<Net>.fc1", "bytes": 600 * MiB + 8 * MiB}, "JSON: largest layer")
    rc, out, _ = gp("check", "run.json.gz", "--max-peak", "800MiB", "--format", "markdown")
    check(out.startswith("<!-- gpuprof-check -->\n### ❌ GPU memory: 1 of 2 GPUs over the limit"), "markdown")


def md_tables_ok(text, what):
    """Every row of every table has the cells of its header (GFM: a '|' not
    escaped splits a cell, inside code too)."""
    cells = lambda line: len(re.findall(r"(?<!\\)\|", line))  # noqa: E731
    width = None
    for line in text.splitlines():
        if line.startswith("|"):
            if width is None:
                width = cells(line)
            check(cells(line) == width, "%s: a table row with %d cells, not %d: %r" % (what, cells(line), width, line))
        else:
            width = None


def golden_runs():
    """name -> (command, args): the reports pinned in golden/."""
    run_train("base.json.gz")
    # fc1's activations doubled, fc2's smaller, a larger cuBLAS workspace,
    # and a tensor kept each step (a leak in fc2)
    run_train("new.json.gz", act=(192 * MiB, 40 * MiB), cublas=72 * MiB, leak=3 * MiB)
    summarize("base.json.gz")
    torchrun("run", [96 * MiB, 600 * MiB])
    # a hostile layer name, for the escaping of Markdown
    for name, nbytes in (("odd.json.gz", 4 * MiB), ("odd2.json.gz", 8 * MiB)):
        sim = synth.Sim(cmdline="python3 odd|name.py")
        sim.torch_info()
        sim.push("fwd:<Ne|t>")
        sim.push("fwd:a`b*c_d")
        sim.alloc(nbytes, "activations")
        sim.pop()
        sim.pop()
        write(sim, name)
    runs = {}
    for fmt, ext in (("text", "txt"), ("markdown", "md"), ("json", "json")):
        runs["regression.%s" % ext] = ("compare", ["base.summary.json", "new.json.gz", "--format", fmt])
        runs["check.%s" % ext] = ("check", ["run.json.gz", "--max-peak", "512MiB", "--format", fmt])
    runs["odd.md"] = ("compare", ["odd.json.gz", "odd2.json.gz", "--format", "markdown"])
    return runs


def test_oom():
    """A run whose program did not get past an out-of-memory error fails check
    and compare (exit 1, a line of its own), whatever its peak, from a trace,
    a summary or a run directory; --allow-oom lets it pass and says so.
    Failures it got past do not fail it."""
    run_train("base.json.gz")
    run_train("died.json.gz", oom_at=3, oom_request=3 * GiB)
    for args in (["died.json.gz"], [summarize("died.json.gz")]):
        rc, out, err = check_cmd(*args, "--max-peak", "10GiB")
        eq((rc, err), (1, ""), "check %s: fails, though within the limit" % args[0])
        check("ok: peak allocated on cuda:0 was" in out and
              "\nFAIL: process 4242 (cuda:0) ran out of memory at step 3: 3.00 GiB requested in forward (<Net>.fc2)"
              in out, "check %s: its own line: %r" % (args[0], out[:500]))
        rc, out, err = check_cmd(*args, "--max-peak", "10GiB", "--allow-oom")
        eq(rc, 0, "check %s --allow-oom: passes" % args[0])
        check("allowed by --allow-oom: process 4242 (cuda:0) ran out of memory at step 3" in out,
              "check --allow-oom: said: %r" % out[:500])
        rc, doc, _ = gp_json("check", *args, "--max-peak", "10GiB")
        eq(doc["verdict"], "over", "check JSON: the verdict")
        o = doc["devices"][0]["out_of_memory"]
        eq((o["fatal"], o["allowed"], o["step"], o["request"], o["guessed"]), (1, False, 3, 3 * GiB, False),
           "check JSON: what it ran out of memory at")
        check(o["line"].startswith("FAIL: process 4242 (cuda:0) ran out of memory"), "check JSON: the line")
        rc, out, _ = check_cmd(*args, "--max-peak", "10GiB", "--format", "markdown")
        check(rc == 1 and "❌ process 4242 (cuda:0) ran out of memory at step 3" in out,
              "check Markdown: its line: %r" % out[:400])
    rc, out, err = compare("base.json.gz", "died.json.gz")
    eq(rc, 1, "compare: NEW died of an OOM: fails, though its peak is lower (%s)" % err.strip())
    check("NEW ran out of memory on 1 GPU" in out.splitlines()[0] and
          "\nFAIL: process 4242 (cuda:0) ran out of memory at step 3" in out, "compare: said: %r" % out[:500])
    rc, out, _ = compare("base.json.gz", "died.json.gz", "--format", "markdown")
    check(rc == 1 and "NEW ran out of memory on 1 GPU" in out.splitlines()[1] and
          "\n❌ process 4242 (cuda:0) ran out of memory at step 3" in out, "compare Markdown: %r" % out[:400])
    rc, doc, _ = compare_json("base.json.gz", "died.json.gz", rc=1)
    eq(pair(doc)["new"]["out_of_memory"]["fatal"], 1, "compare JSON: NEW's")
    eq(pair(doc)["base"]["out_of_memory"], None, "compare JSON: BASE ran out of nothing")
    rc, doc, _ = compare_json("died.json.gz", "base.json.gz", rc=0)
    check(any("BASE's program did not get past an out-of-memory error" in x for x in pair(doc)["notes"]),
          "compare: BASE died of an OOM: a note, no failure (%r)" % pair(doc)["notes"])
    rc, out, _ = compare("base.json.gz", "died.json.gz", "--allow-oom")
    check(rc == 0 and "allowed by --allow-oom: process 4242 (cuda:0)" in out, "compare --allow-oom: %r" % out[:500])
    # a run directory whose rank 1 died of an OOM (PyTorch raised it at step 8)
    ranks = os.path.join(HERE, "..", "data", "ranks2-grow-h200")
    rc, out, _ = check_cmd(ranks, "--max-peak", "150GiB")
    check(rc == 1 and "FAIL: rank 1 (process 3881, cuda:1) ran out of memory at step 8: 49.1 GiB requested in "
          "forward (<DistributedDataParallel>.module), PyTorch raised OutOfMemoryError" in out,
          "check RUN: rank 1 died: %r" % out[:300])
    rc, out, _ = check_cmd(ranks, "--max-peak", "150GiB", "--allow-oom")
    eq(rc, 0, "check RUN --allow-oom")
    # outside every phase and module, no steps: "none" is no phase to name
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    sim.alloc(64 * MiB, "parameters")
    sim.oom(6 * GiB)
    write(sim, "bare.json.gz")
    rc, out, _ = check_cmd("bare.json.gz", "--max-peak", "1GiB")
    check(rc == 1 and "\nFAIL: process 4242 (cuda:0) ran out of memory: 6.00 GiB requested, PyTorch raised "
          "OutOfMemoryError\n" in out, "check: a bare script's OOM: %r" % out[:300])
    # failures got past (the allocator's retry, cuDNN's caught trials) pass
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    sim.push("fwd:<Net>")
    sim.oom(6 * GiB)                 # raised inside the module, caught: it goes on
    sim.free(sim.alloc(64 * MiB, "temporaries"))
    sim.pop()
    sim.mark("step:1")
    write(sim, "got_past.json.gz")
    rc, out, _ = check_cmd("got_past.json.gz", "--max-peak", "1GiB")
    check(rc == 0 and "ran out of memory" not in out, "check: a failure got past passes: %r" % out[:300])
    # a summary written before analyze said what was fatal: each failure not
    # recovered from counts, and the line says so
    old = json.load(open(path(summarize("died.json.gz", "old.json"))))
    for d in old["devices"]:
        del d["oom_outcomes"], d["ooms_got_past"]
        for o in d["ooms"]:
            del o["fatal"], o["outcome"], o["past_after"]
    with open(path("old.json"), "w") as f:
        json.dump(old, f)
    rc, out, _ = check_cmd("old.json", "--max-peak", "10GiB")
    check(rc == 1 and "(an older summary: every failure not recovered from counts)" in out,
          "an older summary: %r" % out[:400])
    # counts that do not add up: bad input
    bad = json.load(open(path(summarize("died.json.gz", "bad.json"))))
    bad["devices"][0]["oom_outcomes"]["fatal"] = 0
    with open(path("bad.json"), "w") as f:
        json.dump(bad, f)
    rc, out, err = check_cmd("bad.json", "--max-peak", "10GiB")
    eq(rc, 2, "oom_outcomes that do not add up: exit 2")
    one_line(err, "gpuprof check: bad.json: devices[0]: 'oom_outcomes' add up to 0, but 'oom_count' is 1",
             "said where")


def test_golden():
    """Exact text, Markdown and JSON reports; --update rewrites them."""
    update = "--update" in sys.argv
    gdir = os.path.join(HERE, "golden")
    os.makedirs(gdir, exist_ok=True)
    for name, (cmd, args) in sorted(golden_runs().items()):
        rc, out, err = gp(cmd, *args)
        check(rc in (0, 1), "%s: exit status %d (%s)" % (name, rc, err.strip()))
        out = re.sub(r'"gpuprof_version": "[^"]*"', '"gpuprof_version": "X"', out)
        if name.endswith(".md"):
            md_tables_ok(out, name)
        if name.endswith(".json"):
            json.loads(out)
        gpath = os.path.join(gdir, name)
        if update:
            open(gpath, "w").write(out)
            continue
        want = open(gpath).read() if os.path.exists(gpath) else None
        if not check(out == want, "%s differs from golden/ (regenerate: test_compare.py GPUPROF golden --update)"
                     % name):
            import difflib
            sys.stderr.writelines(list(difflib.unified_diff(
                (want or "").splitlines(True), out.splitlines(True), "golden", "now"))[:80])


def test_noise():
    """bench/compare_noise.py: the spread of repeated runs' peaks."""
    run_train("r1.json.gz")
    run_train("r2.json.gz")
    run_train("r3.json.gz", act=(97 * MiB, 48 * MiB))
    s2 = summarize("r2.json.gz")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "compare_noise.py"), "--gpuprof", GP,
                        "r1.json.gz", s2, "r3.json.gz"], cwd=TMP, capture_output=True, text=True, timeout=300)
    eq(p.returncode, 0, "compare_noise.py exit status (%s)" % p.stderr.strip())
    row = [ln for ln in p.stdout.splitlines() if ln.startswith("| cuda:0") and "| peak allocated |" in ln]
    check(len(row) == 1 and "| 504 MiB | 505 MiB | 1.00 MiB | 0.198% |" in row[0],
          "the spread of peak allocated: %r" % p.stdout)
    check("| 3 |" in (row[0] if row else ""), "3 runs")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "compare_noise.py"), "--gpuprof", GP,
                        "r1.json.gz"], cwd=TMP, capture_output=True, text=True, timeout=300)
    eq(p.returncode, 2, "one run: nothing to compare")


def test_ci_sample():
    """samples/ci/: the workflow runs the commands this gpuprof has."""
    wf = open(os.path.join(ROOT, "samples", "ci", "gpu-memory.yml")).read()
    for s in ("gpuprof --trace", "gpuprof analyze", "--json", "upload-artifact", "gpuprof compare",
              "--format markdown", "GITHUB_STEP_SUMMARY", "self-hosted"):
        check(s in wf, "the workflow has %r" % s)
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml:
        doc = yaml.safe_load(wf)
        check(isinstance(doc, dict) and "jobs" in doc, "the workflow is YAML with jobs")
    # its compare line works on summaries of this gpuprof
    run_train("base.json.gz")
    run_train("new.json.gz", act=(192 * MiB, 48 * MiB))
    os.makedirs(path("ci"))
    summarize("base.json.gz", "ci/baseline.json")
    summarize("new.json.gz", "ci/summary.json", "--top", "50")
    m = re.search(r"gpuprof compare ([^\n]*?)--format markdown", wf)
    check(m is not None, "a compare line in the workflow")
    rc, out, _ = compare("ci/baseline.json", "ci/summary.json", "--format", "markdown")
    eq(rc, 1, "the CI example's compare: exit 1 on a regression")
    md_tables_ok(out, "CI markdown")


if __name__ == "__main__":
    sys.exit(checks.main(globals(), "gpuprof-compare."))
