"""Pools bench/overhead.sh rounds from several runs (machines, times)
into one verdict per configuration: each round's step
against the plain run of the same round and allocator, the median of all
those per-round differences, a distribution-free 95% confidence interval of
that median (from the order statistics: the rounds are independent draws of
one configuration's cost), and how many rounds met a target.

  pool_overhead.py [--target CONFIG=PCT ...] [--when CONFIG<=PCT] [--corr CONFIG] FILE...

FILE holds OVERHEAD lines as overhead.sh writes them (overhead.txt, or a
bench/data/ copy; other lines are skipped). Rounds are told apart by
file and round number. The plain runs are the configurations whose name
starts with "plain" (overhead.sh's default names plain and plain-async);
every other run is paired with the plain run of its round that used the
same allocator (the line's backend=, as PyTorch reported it).

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
      bench/data/2026-11-22-gpt2-overhead-h100-*.txt"""
import argparse
import collections
import math
import statistics
import sys

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append", default=[], metavar="CONFIG=PCT")
    ap.add_argument("--when", metavar="CONFIG<=PCT")
    ap.add_argument("--corr", metavar="CONFIG")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
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
    per_round = {}  # (path, round) -> {config: difference in %}
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


if __name__ == "__main__":
    sys.exit(main())
