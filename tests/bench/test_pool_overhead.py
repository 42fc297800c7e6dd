"""bench/pool_overhead.py: the median's confidence interval from order
statistics, rounds paired with the plain run of their own file, round and
allocator (or, with --against, with one configuration's run whatever its
allocator), the budget's checks (--budget), and malformed input refused
with exit 2."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
tool = os.path.join(here, "..", "..", "bench", "pool_overhead.py")
sys.path.insert(0, os.path.dirname(tool))
import pool_overhead  # noqa: E402

fails = 0


def check(what, ok):
    global fails
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    fails += not ok


# n = 12: s[2]..s[9] holds the median with 1 - 2*(1+12+66)/4096 = 0.9614
lo, hi, cover = pool_overhead.median_ci(list(range(12, 0, -1)))
check("n=12 interval is the 3rd..10th value", (lo, hi) == (3, 10))
check("n=12 coverage 0.9614", abs(cover - (1 - 2 * 79 / 4096)) < 1e-12)
# n = 6: only the extremes reach 95% (1 - 2/64 = 0.96875)
check("n=6 interval is min..max", pool_overhead.median_ci([5, 1, 4, 2, 6, 3])[:2] == (1, 6))
check("n=5 has none", pool_overhead.median_ci([1, 2, 3, 4, 5]) == (None, None, 0.0))


def line(cfg, rnd, ms, backend=None):
    if backend is None:
        backend = "cudaMallocAsync" if cfg in ("plain-async", "tensor") else "native"
    return "OVERHEAD config=%s round=%d model=gpt2 steps=15 median_ms=%.3f enqueue_ms=1 backend=%s\n" % (
        cfg, rnd, ms, backend)


def run(texts, *args):
    paths = []
    with tempfile.TemporaryDirectory() as d:
        for i, t in enumerate(texts):
            p = os.path.join(d, "run%d.txt" % i)
            with open(p, "w") as f:
                f.write(t)
            paths.append(p)
        r = subprocess.run([sys.executable, tool, *args, *paths], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# Round 1 appears in both files with different plain runs: each native run
# must be paired with its own file's plain (+1% and +3%), tensor with
# plain-async (+2%, +4%): by the allocator its line names, so a tensor-mode
# configuration of another name (tensor-cb) pairs with plain-async too.
a = "noise\n" + line("plain", 1, 100) + line("native", 1, 101) + line("plain-async", 1, 90) + \
    line("tensor", 1, 91.8) + line("tensor-cb", 1, 94.5, "cudaMallocAsync") + \
    "STEAL config=plain round=1 ticks=3\n"
b = line("plain", 1, 50) + line("native", 1, 51.5) + line("plain-async", 1, 40) + line("tensor", 1, 41.6)
rc, out, err = run([a, b], "--target", "native=2")
print(out, err, end="")
check("exit 0", rc == 0)
nat = [l for l in out.splitlines() if "config=native " in l]
ten = [l for l in out.splitlines() if "config=tensor " in l]
check("native pooled over both files", len(nat) == 1 and "rounds=2 " in nat[0] and "median_pct=+2.00" in nat[0])
check("native per round paired in its file", nat and "per_round=+1.0,+3.0" in nat[0])
check("native target counted", nat and "rounds_within_2%=1/2" in nat[0])
check("tensor paired with plain-async", len(ten) == 1 and "per_round=+2.0,+4.0" in ten[0])
check("no CI under 6 rounds", nat and "no_CI" in nat[0])
cb = [l for l in out.splitlines() if "config=tensor-cb " in l]
check("another tensor-mode name paired with plain-async", len(cb) == 1 and "per_round=+5.0" in cb[0])

# --when keeps the rounds whose reference cost is within its bound; --corr
# gives Pearson's r over the rounds that have both configurations.
c = "".join(line("plain", r, 100) + line("torchprof", r, 100 + tp) + line("native", r, 100 + nat)
            for r, tp, nat in ((1, 2, 1), (2, 3, 2), (3, 9, 3), (4, 12, 4)))
rc, out, err = run([c], "--when", "torchprof<=3.5", "--corr", "torchprof")
print(out, err, end="")
check("--when: exit 0", rc == 0)
check("--when says what it kept", "WHEN config=torchprof max_pct=3.5 rounds=2/4" in out)
nat = [l for l in out.splitlines() if l.startswith("POOLED config=native ")]
check("--when pools the kept rounds only", len(nat) == 1 and "per_round=+1.0,+2.0" in nat[0])
check("--corr over the kept rounds: too few", "CORR config=native with=torchprof rounds=2 r=none" in out)
rc, out, err = run([c], "--corr", "torchprof")
check("--corr r of a monotone but unequal pair", rc == 0 and
      "CORR config=native with=torchprof rounds=4 r=+0.97" in out)
rc, out, err = run([c], "--when", "torchprof<=1")
check("--when keeping nothing: exit 0, said", rc == 0 and "rounds=0/4" in out and "POOLED" not in out)
for args in (("--when", "torchprof<4"), ("--when", "<=4"), ("--when", "torchprof<=x"),
             ("--when", "torchprof<=nan"), ("--when", "absent<=4"), ("--corr", "absent")):
    rc, out, err = run([c], *args)
    check("refused with exit 2: %s %s" % args, rc == 2 and err.startswith("pool_overhead.py: "))
check("pearson of a perfect line", abs(pool_overhead.pearson([1, 2, 3], [2, 4, 6]) - 1) < 1e-12)
check("pearson of a constant is none", pool_overhead.pearson([1, 2, 3], [5, 5, 5]) is None)

for bad in (line("native", 1, float("nan")), "OVERHEAD config=native median_ms=70\n",
            line("native", 1, 0.0), "OVERHEAD config=x round=1 median_ms=abc\n",
            "OVERHEAD config=native round=1 median_ms=70\n"):
    rc, out, err = run([line("plain", 1, 70) + bad])
    check("refused with exit 2: %r" % bad.strip()[:50], rc == 2 and err.startswith("pool_overhead.py: "))
rc, out, err = run([line("native", 1, 70)])
check("nothing to pair: exit 2", rc == 2)
rc, out, err = run([line("plain", 1, 70) + line("plain-again", 1, 71, "native") + line("native", 1, 72)])
check("two plain runs of one allocator in a round: exit 2", rc == 2 and "two plain runs" in err)

# --against plain: tensor (cudaMallocAsync) against plain, not plain-async,
# and plain-async is then a configuration like any other; round 2 has no
# plain run and compares nothing.
d = line("plain", 1, 100) + line("plain-async", 1, 90) + line("tensor", 1, 94.5) + \
    line("native", 1, 101) + line("plain", 3, 100) + line("tensor", 3, 97) + \
    line("native", 3, 102) + line("plain-async", 2, 90) + line("tensor", 2, 50)
rc, out, err = run([d], "--against", "plain")
print(out, err, end="")
ten = [l for l in out.splitlines() if l.startswith("POOLED config=tensor ")]
check("--against: exit 0", rc == 0)
check("--against: tensor against plain whatever its allocator",
      len(ten) == 1 and "rounds=2 " in ten[0] and "per_round=-5.5,-3.0" in ten[0])
check("--against: plain-async compared too",
      "POOLED config=plain-async rounds=1 median_pct=-10.00 " in out)
check("--against: the config itself is not compared", "config=plain " not in out)
rc, out, err = run([d])
check("without --against: tensor against plain-async as before",
      rc == 0 and "POOLED config=tensor rounds=2 " in out and "per_round=+5.0,-44.4" in out)
for args in (("--against", "absent"), ("--budget",), ("--budget-names", "native=x"),
             ("--against", "plain", "--budget", "--budget-names", "native"),
             ("--against", "plain", "--budget", "--budget-names", "nat=native"),
             ("--against", "plain", "--budget", "--budget-names", "native="),
             ("--against", "plain", "--budget", "--budget-names", "native=tensor"),
             ("--against", "plain", "--budget", "--budget-names", "native=plain")):
    rc, out, err = run([d], *args)
    check("refused with exit 2: %s" % " ".join(args), rc == 2 and err.startswith("pool_overhead.py: "))


def budget_round(rnd, pct, skip=()):
    """One round's lines: plain at 100 ms, each role at 100 + its cost, and
    plain-async at 90 ms, which would shift tensor's cost if it were paired
    by allocator."""
    t = line("plain", rnd, 100) + line("plain-async", rnd, 90)
    return t + "".join(line(r, rnd, 100 + x) for r, x in pct.items() if r not in skip)


def budget_lines(out, tag):
    return [l for l in out.splitlines() if l.startswith(tag + " ")]


# Six complete rounds: native/tensor 0.2 .. 0.45 (median 0.325, within 0.5,
# the interval min..max below it), native/torchprof 0.1 .. 0.6 (median 0.35,
# over 0.25, the interval across it), stacks - (native + history) -1 .. +0.5
# (median -0.25, within 0). Round 7 lacks history; its values, far off,
# would move every median if it were used.
rows = ((1, 5, 10, 1.5, 1), (1, 4, 5, 2, 0.5), (1.5, 5, 5, 2, 1),
        (1.4, 4, 3.5, 1.4, 0), (2, 5, 4, 2, 1), (1.8, 4, 3, 3.3, 1))
e = "".join(budget_round(i + 1, dict(zip(pool_overhead.BUDGET_ROLES, v))) for i, v in enumerate(rows))
e += budget_round(7, dict(native=10, tensor=1, torchprof=1, stacks=50, history=1), skip=("history",))
rc, out, err = run([e], "--against", "plain", "--budget")
print(out, err, end="")
check("--budget: exit 0", rc == 0)
head = budget_lines(out, "BUDGET")
check("--budget: names and rounds used", len(head) == 1 and head[0].endswith(
    "native=native tensor=tensor torchprof=torchprof stacks=stacks history=history rounds=6/7"))
skip = budget_lines(out, "BUDGET_SKIP")
check("--budget: the round without history skipped",
      len(skip) == 1 and skip[0].endswith(" round=7 missing=history"))
rows_out = budget_lines(out, "BUDGET_ROUND")
check("--budget: one line per round used", len(rows_out) == 6 and " round=4 native_pct=+1.40 " in rows_out[3]
      and rows_out[3].endswith(" native/tensor=+0.350 native/torchprof=+0.400 "
                               "stacks-(native+history)=+0.000"))
nt, ntp, st = (budget_lines(out, "BUDGET_CHECK") + [""] * 3)[:3]
check("--budget: native/tensor met, decided",
      nt.startswith("BUDGET_CHECK check=native/tensor rounds=6 undefined=0 median=+0.325 "
                    "ci95=+0.200..+0.450 cover=0.9688 target=0.5 met=yes straddles=no "))
check("--budget: native/torchprof not met, undecided",
      ntp.startswith("BUDGET_CHECK check=native/torchprof rounds=6 undefined=0 median=+0.350 "
                     "ci95=+0.100..+0.600 cover=0.9688 target=0.25 met=no straddles=yes "))
check("--budget: stacks within native + history",
      st.startswith("BUDGET_CHECK check=stacks-(native+history) rounds=6 undefined=0 "
                    "median=-0.250 ci95=-1.000..+0.500 cover=0.9688 target=0 met=yes straddles=yes "))
check("--budget: verdict not met", "BUDGET_VERDICT met=no checks_met=2/3" in out)

# Renamed roles, five rounds (no interval), all met; in round 2 tensor cost
# nothing, so native/tensor is undefined there and left out of its median.
names = dict(zip(pool_overhead.BUDGET_ROLES, ("nat", "ten", "tp", "nat-stacks", "hist")))
rows = ((1, 4, 8, 1.5, 1), (0.5, -1, 8, 1, 0.5), (1, 3, 5, 2, 1), (1, 5, 6, 1, 0.5), (1, 4, 4, 2, 1))
f = "".join(budget_round(i + 1, {names[r]: x for r, x in zip(pool_overhead.BUDGET_ROLES, v)})
            for i, v in enumerate(rows))
rc, out, err = run([f], "--against", "plain", "--budget",
                   "--budget-names", "native=nat,tensor=ten,torchprof=tp,stacks=nat-stacks,history=hist")
print(out, err, end="")
check("--budget-names: exit 0", rc == 0 and "BUDGET against=plain native=nat tensor=ten " in out)
nt = budget_lines(out, "BUDGET_CHECK")[:1] or [""]
check("--budget: a reference that cost nothing leaves its ratio undefined",
      nt[0].startswith("BUDGET_CHECK check=native/tensor rounds=4 undefined=1 median=+0.250 "
                       "ci95=none target=0.5 met=yes straddles=unknown ")
      and nt[0].endswith("per_round=+0.250,none,+0.333,+0.200,+0.250"))
check("--budget: verdict met", "BUDGET_VERDICT met=yes checks_met=3/3" in out)
rc, out, err = run([f], "--against", "plain", "--budget")
check("--budget with no complete round: exit 2", rc == 2 and "no round has all of" in err)
sys.exit(1 if fails else 0)
