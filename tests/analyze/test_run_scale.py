"""Run directories that ask too much: `gpuprof analyze|report|merge|check|
compare` on a run directory of many tiny synthetic traces (synth.py).

  test_run_scale.py GPUPROF files   1,100 traces under `ulimit -n 1024`:
      every command works, the traces read a bounded number at a time
      (at most a few hundred descriptors open at once, however many traces)
  test_run_scale.py GPUPROF claims  1,000 traces that claim world_size
      16,777,216: analyzed in about the time of the same traces claiming
      only their own ranks (a cost that grew with world_size took 80 times
      as long), the missing ranks counted, only the first ones listed
  test_run_scale.py GPUPROF live_cap  more live allocations than analyze
      keeps records of (the cap lowered to 100 by GPUPROF_TEST_MAX_LIVE_RECORDS,
      which only tests set): the rest summarised, said in the text and the
      JSON, every total and peak the same as without the cap
  test_run_scale.py --list   the tests, one a line (CTest's)
"""
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth  # noqa: E402

MiB = 1 << 20
GP = TMP = None
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL: " + what, file=sys.stderr)
    return ok


def make_run(path, n, world_size):
    """n traces of ranks 0..n-1, each one allocation, in a run directory
    (no manifest: every trace in it is read)."""
    os.makedirs(path)
    for rank in range(n):
        pid = 10000 + rank
        sim = synth.Sim(pid=pid, uuid="GPU-%08x-1111-2222-3333-444444444444" % rank,
                        ts_base=1_700_000_000_000_000_000 + rank)
        sim.rank, sim.world_size, sim.local_rank, sim.local_world_size = rank, world_size, 0, 1
        a = sim.alloc(MiB, "activations")
        sim.tick(100)
        sim.free(a)
        sim.tick(100)
        sim.write(os.path.join(path, "rank%d.%d.json.gz" % (rank, pid)))


def limit_files():
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def gp(*args, files_limit=False):
    p = subprocess.run([GP] + list(args), cwd=TMP, capture_output=True, text=True, timeout=600,
                       preexec_fn=limit_files if files_limit else None)
    return p.returncode, p.stdout, p.stderr


def test_files():
    run = os.path.join(TMP, "run")
    make_run(run, 1100, 1100)
    for args in (["analyze", "run"], ["analyze", "--json", "run"], ["report", "run", "-o", "r.html"],
                 ["merge", "run", "-o", "m.json.gz"], ["check", "run", "--max-peak", "1GiB"],
                 ["compare", "run", "run"]):
        rc, out, err = gp(*args, files_limit=True)
        check(rc == 0, "%s under ulimit -n 1024: exit %d, %s" % (" ".join(args), rc, err[-400:]))
        check("Too many open files" not in err, "%s: too many open files" % " ".join(args))
        if args[:2] == ["analyze", "--json"] and rc == 0:
            doc = json.loads(out)
            check(len(doc["traces"]) == 1100, "analyze --json: every trace read (%d)" % len(doc["traces"]))
    # the bound itself, lowered for the test: still every trace, in order
    env = dict(os.environ, GPUPROF_MAX_OPEN_INPUTS="16")
    p = subprocess.run([GP, "analyze", "--json", "run"], cwd=TMP, capture_output=True, text=True,
                       env=env, timeout=600)
    q = subprocess.run([GP, "analyze", "--json", "run"], cwd=TMP, capture_output=True, text=True,
                       timeout=600)
    check(p.returncode == 0 and p.stdout == q.stdout,
          "16 files open at a time: the same answer as 256 (exit %d, %s)" % (p.returncode, p.stderr[-300:]))


def timed(*args):
    t = time.monotonic()
    rc, out, err = gp(*args)
    return time.monotonic() - t, rc, out, err


def test_claims():
    make_run(os.path.join(TMP, "plain"), 1000, 1000)
    make_run(os.path.join(TMP, "claims"), 1000, 16_777_216)
    for cmd in (["analyze", "--json"], ["compare"]):
        def args(d):
            return cmd + [d] + ([d] if cmd == ["compare"] else [])
        plain, rc0, _, err0 = timed(*args("plain"))
        claims, rc1, out1, err1 = timed(*args("claims"))
        check(rc0 == 0 and rc1 in (0, 1), "%s: exit %d/%d (%s%s)" % (cmd[0], rc0, rc1, err0[-200:], err1[-200:]))
        # generous: the cost that grew with world_size made it 80 times slower
        check(claims < 5 * plain + 2.0, "%s: %.2f s with world_size 16777216, %.2f s without"
              % (cmd[0], claims, plain))
        if cmd[0] == "analyze" and rc1 == 0:
            ranks = json.loads(out1)["ranks"]
            check(ranks["world_size"] == 16_777_216, "world_size said")
            check(ranks.get("missing_count") == 16_777_216 - 1000, "missing counted (%r)" % ranks.get("missing_count"))
            check(ranks["missing"][:3] == [1000, 1001, 1002] and len(ranks["missing"]) <= 1024,
                  "only the first missing ranks listed (%d)" % len(ranks["missing"]))
            check("16776216 of the 16777216 ranks left no trace here (ranks 1000, 1001" in err1,
                  "the run's note counts them (%r)" % err1[:300])


def test_live_cap():
    for name, sim in (("tensor", synth.Sim(mode="tensor")), ("hook", synth.HookSim(total=16 << 30))):
        path = os.path.join(TMP, name + ".json.gz")
        kept = []
        for i in range(300):
            kept.append(sim.alloc((i % 7 + 1) * MiB, "activations"))
            sim.tick(10)
        for a in kept[:100]:
            sim.free(a)
            sim.tick(10)
        for i in range(50):
            sim.alloc(3 * MiB, "activations")
            sim.tick(10)
        sim.write(path)
        peak = synth.expect_peak(sim)["bytes"]
        env = dict(os.environ, GPUPROF_TEST_MAX_LIVE_RECORDS="100")
        runs = {}
        for capped in (False, True):
            for fmt in ("--json", None):
                p = subprocess.run([GP, "analyze"] + ([fmt] if fmt else []) + [path], cwd=TMP,
                                   capture_output=True, text=True, timeout=120,
                                   env=env if capped else None)
                check(p.returncode == 0, "%s: analyze exit %d: %s" % (name, p.returncode, p.stderr[-300:]))
                runs[capped, fmt] = p.stdout
        say = re.compile(r"over 100 live allocations: [0-9]+ allocations made past that summarised")
        check(say.search(runs[True, None]), "%s: the text says it summarised" % name)
        check(not say.search(runs[False, None]), "%s: nothing summarised under the cap" % name)
        try:
            full, capped = json.loads(runs[False, "--json"]), json.loads(runs[True, "--json"])
        except ValueError:
            check(False, "%s: JSON" % name)
            continue
        check(any(say.search(n) for t in capped["traces"] for n in t["notes"]),
              "%s: the JSON says it (%r)" % (name, [t["notes"] for t in capped["traces"]]))
        d0, d1 = full["devices"][0], capped["devices"][0]
        check(d1["peak"]["bytes"] == d0["peak"]["bytes"] == peak,
              "%s: the peak exact (%r, %r, expected %d)" % (name, d1["peak"]["bytes"], d0["peak"]["bytes"], peak))
        check(d1["summary"] == d0["summary"], "%s: every total the same with and without the cap" % name)


def main():
    global GP, TMP
    if sys.argv[1:] == ["--list"]:
        print("\n".join(n[len("test_"):] for n in list(globals()) if n.startswith("test_")))
        return
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    GP = os.path.abspath(sys.argv[1])
    fn = globals().get("test_" + sys.argv[2])
    if not fn:
        raise SystemExit("no test " + sys.argv[2])
    TMP = tempfile.mkdtemp(prefix="gpuprof-scale.")
    try:
        fn()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % failures, file=sys.stderr)
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
