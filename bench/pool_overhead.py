"""Pools bench/overhead.sh rounds from several runs (machines, times)
into one verdict per configuration: each round's step
against the plain run of the same round and allocator, the median of all
those per-round differences, a distribution-free 95% confidence interval of
that median (from the order statistics: the rounds are independent draws of
one configuration's cost), and how many rounds met a target.

  pool_overhead.py [--target CONFIG=PCT ...] [--when CONFIG<=PCT] [--corr CONFIG]
                   [--against CONFIG [--budget [--budget-names ROLE=CONFIG,...]]] FILE...

FILE holds OVERHEAD lines as overhead.sh writes them (overhead.txt, or a
bench/data/ copy; other lines are skipped). Rounds are told apart by
file and round number. The plain runs are the configurations whose name
starts with "plain" (overhead.sh's default names plain and plain-async);
every other run is paired with the plain run of its round that used the
same allocator (the line's backend=, as PyTorch reported it).

--against CONFIG pairs every other configuration with CONFIG's run of the
same round instead, whatever either's allocator (rounds without CONFIG are
left out): a mode that changes the allocator (tensor) is then charged with
that change too, as the user who ran plain CONFIG would see it. Plain runs
other than CONFIG are then configurations like any other.

--budget (with --against) checks the overhead budget on the rounds that
have all of its configurations and CONFIG, in percent points against CONFIG:
  native/tensor            <= 0.5   native costs at most half of tensor
  native/torchprof         <= 0.25  a quarter of torch.profiler's
  stacks-(native+history)  <= 0     stacks at most native + PyTorch's own
                                    memory history
It prints a BUDGET line (the names, rounds used of those with CONFIG), a
BUDGET_SKIP line for each round that lacks one (missing=), a BUDGET_ROUND
line for each round used (its differences and the three values), then a
BUDGET_CHECK line for each: the median over the rounds, its 95% interval as
above (ci95=LO..HI, or none under 6 rounds), target=, met=yes|no (the
median within the target), straddles=yes|no|unknown (the interval holds the
target: the rounds do not decide), and BUDGET_VERDICT met=yes when all
three medians are met. A ratio whose reference cost nothing or less in a
round (the denominator <= 0) is undefined there: that round is left out of
its median and counted (undefined=). --budget-names ROLE=CONFIG,... renames
the roles' configurations (native, tensor, torchprof, stacks, history; by
default each its own name); roles not named keep their default.

--when CONFIG<=PCT pools only the rounds in which CONFIG cost at most PCT
(e.g. torchprof<=4.5: the rounds where torch.profiler cost about what the
budget cites), and says how many of the rounds that had CONFIG were kept.
--corr CONFIG prints, for every other configuration, Pearson's r between
its per-round differences and CONFIG's over the rounds that have both
(those --when kept): how
much a round's reference cost says about its other costs.

EXAMPLES
  python3 bench/pool_overhead.py --target native=1 --target tensor=2 \\
      bench/data/2026-11-22-gpt2-overhead-h100-*.txt
  python3 bench/pool_overhead.py --when 'torchprof<=4.5' --corr torchprof \\
      bench/data/2026-11-22-gpt2-overhead-h100-*.txt
  python3 bench/pool_overhead.py --against plain --budget OUTDIR/overhead.txt
  python3 bench/pool_overhead.py --against base --budget \\
      --budget-names native=nat,stacks=nat-stacks run1/overhead.txt run2/overhead.txt"""
import argparse
import collections
import math
import statistics
import sys

BUDGET_ROLES = ("native", "tensor", "torchprof", "stacks", "history")


def fail(msg):
    print("pool_overhead.py: " + msg, file=sys.stderr)
    sys.exit(2)


def median_ci(xs, level=0.95):
    """The narrowest pair of order statistics (lo, hi) of xs whose interval
    holds the true median with probability >= level, and that probability;
    (None, None, 0.0) for fewer than 6 values, where no such interval
    reaches 95%."""
    n = len(xs)
    s = sorted(xs)
    for k in range(n // 2, -1, -1):  # interval s[k] .. s[n-1-k]
        # P(k < B(n, 1/2) < n - k), B the number of values below the median
        cover = sum(math.comb(n, i) for i in range(k + 1, n - k)) / 2.0 ** n
        if k < n - 1 - k and cover >= level:
            return s[k], s[n - 1 - k], cover
    return None, None, 0.0


def parse(path, into):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("OVERHEAD "):
                continue
            kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            try:
                ms = float(kv["median_ms"])
                key = (path, kv["round"])
                name, backend = kv["config"], kv["backend"]
            except (KeyError, ValueError):
                ms = None
            if ms is None or not math.isfinite(ms) or ms <= 0:
                fail("%s: malformed line: %s" % (path, line.strip()[:200]))
            into[key][name] = (ms, backend)


def pearson(xs, ys):
    """Pearson's r of two equally long lists; None when either is constant
    or there are fewer than 3 pairs."""
    if len(xs) < 3:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def pair_by_backend(rounds):
    """{(path, round): {config: % against the plain run of its allocator}};
    the plain runs themselves are left out."""
    per_round = {}
    for (path, rnd), cfgs in rounds.items():
        plain = {}  # backend -> the plain run's step
        for name, (ms, backend) in cfgs.items():
            if name.startswith("plain"):
                if backend in plain:
                    fail("%s: round %s has two plain runs with backend %s" % (path, rnd, backend))
                plain[backend] = ms
        per_round[(path, rnd)] = {name: (ms / plain[backend] - 1) * 100
                                  for name, (ms, backend) in cfgs.items()
                                  if not name.startswith("plain") and backend in plain}
    return per_round


def pair_against(rounds, against):
    """As pair_by_backend, but every configuration against the run of
    `against` in its round, whatever the allocators; a round without it
    compares nothing."""
    if not any(against in cfgs for cfgs in rounds.values()):
        fail("--against: no round has configuration %s" % against)
    per_round = {}
    for key, cfgs in rounds.items():
        base = cfgs[against][0] if against in cfgs else None
        per_round[key] = {name: (ms / base - 1) * 100 for name, (ms, _) in cfgs.items()
                          if base is not None and name != against}
    return per_round


def budget_names(text, against):
    """{role: config} from --budget-names' ROLE=CONFIG,... over the defaults
    (each role its own name)."""
    names = {r: r for r in BUDGET_ROLES}
    for item in (text.split(",") if text else []):
        role, sep, cfg = item.partition("=")
        if not sep or role not in names or not cfg:
            fail("--budget-names wants ROLE=CONFIG,... with ROLE one of %s, not %r"
                 % (",".join(BUDGET_ROLES), item))
        names[role] = cfg
    if len(set(names.values())) < len(names) or against in names.values():
        fail("--budget-names: the roles and --against must name different configurations")
    return names


def ratio(x, ref):
    """x as a share of ref; None where ref cost nothing or less, where a
    share of it means nothing."""
    return x / ref if ref > 0 else None


# (name, target, the value of a round's differences by role; None: undefined)
BUDGET_CHECKS = (
    ("native/tensor", 0.5, lambda d: ratio(d["native"], d["tensor"])),
    ("native/torchprof", 0.25, lambda d: ratio(d["native"], d["torchprof"])),
    ("stacks-(native+history)", 0.0, lambda d: d["stacks"] - (d["native"] + d["history"])),
)


def fmt(x):
    return "none" if x is None else "%+.3f" % x


def budget_check(name, target, values):
    """The BUDGET_CHECK line of one check from its per-round values."""
    xs = [x for x in values if x is not None]
    med = statistics.median(xs) if xs else None
    lo, hi, cover = median_ci(xs)
    met = "unknown" if med is None else "yes" if med <= target else "no"
    straddles = "unknown" if lo is None else "yes" if lo <= target <= hi else "no"
    ci = "none" if lo is None else "%s..%s cover=%.4f" % (fmt(lo), fmt(hi), cover)
    return met, ("BUDGET_CHECK check=%s rounds=%d undefined=%d median=%s ci95=%s target=%g "
                 "met=%s straddles=%s per_round=%s" % (
                     name, len(xs), len(values) - len(xs), fmt(med), ci, target, met,
                     straddles, ",".join(fmt(x) for x in values)))


def budget(rounds, per_round, against, names):
    """Prints the budget's lines over the rounds of per_round that have
    `against` and every role's configuration."""
    want = [against] + [names[r] for r in BUDGET_ROLES]
    used, skipped = [], []
    for key in per_round:
        missing = [n for n in want if n not in rounds[key]]
        (skipped if missing else used).append((key, missing))
    if not used:
        fail("--budget: no round has all of %s" % ",".join(want))
    print("BUDGET against=%s %s rounds=%d/%d" % (
        against, " ".join("%s=%s" % (r, names[r]) for r in BUDGET_ROLES), len(used), len(per_round)))
    for (path, rnd), missing in skipped:
        print("BUDGET_SKIP file=%s round=%s missing=%s" % (path, rnd, ",".join(missing)))
    values = [[] for _ in BUDGET_CHECKS]
    for (path, rnd), _ in used:
        d = {r: per_round[(path, rnd)][names[r]] for r in BUDGET_ROLES}
        row = [f(d) for _, _, f in BUDGET_CHECKS]
        for into, x in zip(values, row):
            into.append(x)
        print("BUDGET_ROUND file=%s round=%s %s %s" % (
            path, rnd, " ".join("%s_pct=%+.2f" % (r, d[r]) for r in BUDGET_ROLES),
            " ".join("%s=%s" % (c[0], fmt(x)) for c, x in zip(BUDGET_CHECKS, row))))
    met = []
    for (name, target, _), xs in zip(BUDGET_CHECKS, values):
        ok, line = budget_check(name, target, xs)
        met.append(ok == "yes")
        print(line)
    print("BUDGET_VERDICT met=%s checks_met=%d/%d" % (
        "yes" if all(met) else "no", sum(met), len(met)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append", default=[], metavar="CONFIG=PCT")
    ap.add_argument("--when", metavar="CONFIG<=PCT")
    ap.add_argument("--corr", metavar="CONFIG")
    ap.add_argument("--against", metavar="CONFIG")
    ap.add_argument("--budget", action="store_true")
    ap.add_argument("--budget-names", metavar="ROLE=CONFIG,...")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.budget_names is not None and not a.budget:
        fail("--budget-names goes with --budget")
    if a.budget and a.against is None:
        fail("--budget needs --against CONFIG: every cost against one plain run")
    names = budget_names(a.budget_names, a.against) if a.budget else None
    when = None
    if a.when is not None:
        name, sep, pct = a.when.partition("<=")
        try:
            when = (name, float(pct))
        except ValueError:
            when = None
        if not sep or not name or when is None or not math.isfinite(when[1]):
            fail("--when wants CONFIG<=PCT, not %r" % a.when)
    targets = {}
    for t in a.target:
        name, _, pct = t.partition("=")
        try:
            targets[name] = float(pct)
        except ValueError:
            fail("--target wants CONFIG=PCT, not %r" % t)
    rounds = collections.defaultdict(dict)
    for p in a.files:
        try:
            parse(p, rounds)
        except (OSError, UnicodeDecodeError) as e:
            fail("%s: %s" % (p, e))
    # (path, round) -> {config: difference in %}
    if a.against is None:
        per_round = pair_by_backend(rounds)
    else:
        per_round = pair_against(rounds, a.against)
    if when is not None:
        having = [k for k, d in per_round.items() if when[0] in d]
        if not having:
            fail("--when: no round has configuration %s" % when[0])
        kept = [k for k in having if per_round[k][when[0]] <= when[1]]
        print("WHEN config=%s max_pct=%g rounds=%d/%d" % (when[0], when[1], len(kept), len(having)))
        per_round = {k: per_round[k] for k in kept}
    diffs = collections.defaultdict(list)
    for k in per_round:
        for name, x in per_round[k].items():
            diffs[name].append(x)
    if not diffs:
        if when is not None:
            return 0  # said by WHEN: no round within the bound
        fail("no rounds with a plain run to compare with")
    for name in sorted(diffs):
        d = diffs[name]
        lo, hi, cover = median_ci(d)
        ci = "%.0f%% CI %+.2f..%+.2f" % (cover * 100, lo, hi) if lo is not None else "no CI (< 6 rounds)"
        met = ""
        if name in targets:
            met = " rounds_within_%g%%=%d/%d" % (targets[name], sum(x <= targets[name] for x in d), len(d))
        print("POOLED config=%s rounds=%d median_pct=%+.2f %s%s per_round=%s" % (
            name, len(d), statistics.median(d), ci.replace(" ", "_", 1), met,
            ",".join("%+.1f" % x for x in d)))
    if a.corr is not None:
        if a.corr not in diffs:
            fail("--corr: no round has configuration %s" % a.corr)
        for name in sorted(diffs):
            if name == a.corr:
                continue
            pairs = [(d[a.corr], d[name]) for d in per_round.values() if a.corr in d and name in d]
            r = pearson([p[0] for p in pairs], [p[1] for p in pairs])
            print("CORR config=%s with=%s rounds=%d r=%s" % (
                name, a.corr, len(pairs), "none" if r is None else "%+.2f" % r))
    if a.budget:
        budget(rounds, per_round, a.against, names)


if __name__ == "__main__":
    sys.exit(main())
