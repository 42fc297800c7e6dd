"""The help, README.md and bench/RESULTS.md say the same.

  python3 test_doc_figures.py GPUPROF

The costs of the modes are measured in bench/RESULTS.md; `gpuprof help
trace` quotes them (built from RESULTS.md, viewer/bench_figures.cmake) and
README.md's table of modes does too. This reads the three and fails on any
figure that differs. It also holds the help's other claims to what the code
and README.md say: how compare matches processes (viewer/compare/match.c),
and the defaults of the environment variables `help trace` lists.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIGURE = re.compile(r"[+\u2212-]\d+(?:\.\d+)?%")
failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what, file=sys.stderr)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def rows(text):
    """A Markdown table's rows: their cells, stripped."""
    for line in text.splitlines():
        if line.startswith("| ") and line.endswith(" |"):
            yield [c.strip() for c in line[2:-2].split(" | ")]


def results():
    """RESULTS.md's median costs, by the first cell of their row: the third
    cell's figure in bold."""
    costs = {}
    for cells in rows(read("bench/RESULTS.md")):
        if len(cells) >= 3:
            m = re.match(r"\*\*([+-]\d+(?:\.\d+)?%)\*\*", cells[2])
            if m and cells[0] not in costs:
                costs[cells[0]] = m.group(1)
    return costs


# The measurements quoted, by the name of their row in RESULTS.md.
NATIVE = "native (the default)"
STACKS = "native `--stacks`"
TENSOR = "tensor (with its switch to `cudaMallocAsync`)"
TORCH_PROFILER = "torch.profiler, `profile_memory=True`"
RECORD_HISTORY = '`_record_memory_history(stacks="python")`'
CUDA = "gpuprof `--mode cuda`: the recorder, no Python hooks (`cuda`)"
TORCH_HISTORY = "gpuprof `--mode native --torch-history` (`native+GPUPROF_TORCH_HISTORY=1`)"
CUPTI = ("CUPTI alone, no gpuprof: `bench/bare_cupti.c` counting kernels, memory, copies, sets "
         "(`bare-native`)")

# README.md's table of modes: the start of a row's first cell, and the
# measurements its last cell quotes, in order.
README_ROWS = (
    ("**native** (the default", (NATIVE, TENSOR, TORCH_PROFILER)),
    ("**native `--stacks`**", (STACKS, RECORD_HISTORY)),
    ("**tensor**", (TENSOR,)),
    ("**native `--torch-history`**", (TORCH_HISTORY,)),
    ("**cuda**", (CUDA, CUPTI)),
)

# `gpuprof help trace`'s MODES: the start of a line, and the measurement
# that line quotes.
HELP_LINES = (
    ("  native ", NATIVE),
    ("  --stacks ", STACKS),
    ("  tensor ", TENSOR),
    ("  (torch.profiler with profile_memory", TORCH_PROFILER),
    ("  cuda ", CUDA),
)


def check_figures(gp):
    costs = results()
    for name in {n for _, ns in README_ROWS for n in ns} | {n for _, n in HELP_LINES}:
        if name not in costs:
            fail("bench/RESULTS.md: no row %r with a median cost" % name)
    if failures:
        return
    seen = set()
    for cells in rows(read("README.md")):
        for start, names in README_ROWS:
            if not cells[0].startswith(start):
                continue
            seen.add(start)
            got = [f.replace("\u2212", "-") for f in FIGURE.findall(cells[-1])]
            want = [costs[n] for n in names]
            if got != want:
                fail("README.md, mode %s: %s, bench/RESULTS.md: %s" % (start, got, want))
    for start, _ in README_ROWS:
        if start not in seen:
            fail("README.md: no row of the modes' table starting %r" % start)
    p = subprocess.run([gp, "help", "trace"], capture_output=True, text=True)
    if p.returncode != 0:
        fail("gpuprof help trace: exit %d" % p.returncode)
        return
    modes = p.stdout.split("\nMODES", 1)[-1].split("\n\n", 1)[0]
    for start, name in HELP_LINES:
        lines = [ln for ln in modes.splitlines() if ln.startswith(start)]
        got = FIGURE.findall(lines[0]) if len(lines) == 1 else None
        if got != [costs[name]]:
            fail("gpuprof help trace, %r: %s, bench/RESULTS.md: %s" % (start.strip(), got, costs[name]))


def check_compare_matching(gp):
    """Processes are matched by rank first where both runs know it, then by
    device and command line, then by device alone: match.c's order."""
    code = read("viewer/compare/match.c")
    order = [code.find(s) for s in ("1. the torch.distributed rank", "2. the device index and the command line",
                                    "3. the device alone")]
    if -1 in order or order != sorted(order):
        fail("viewer/compare/match.c no longer says its order; update this test and the help")
    p = subprocess.run([gp, "help", "compare"], capture_output=True, text=True)
    said = " ".join(p.stdout.split())
    if "matched by rank and device where both runs know the rank, else by device and command line, " \
       "else by device alone" not in said:
        fail("gpuprof help compare: how processes are matched is not match.c's order: %r"
             % re.findall(r"Processes are matched[^;]*", said))
    readme = " ".join(read("README.md").split())
    if "matched by rank and device where both runs know ranks, else by device and command line" not in readme:
        fail("README.md: how compare matches processes is not match.c's order")


def default_of(text):
    """What a description says is the default: "(default: X; ...)" -> X."""
    m = re.search(r"\(default:? ([^;)]*)", " ".join(text.replace("`", "").split()))
    return m.group(1) if m else None


def check_environment(gp):
    """Every variable of `help trace`'s ENVIRONMENT is in README.md's table
    of them, with the same default (the README's may say more after it)."""
    p = subprocess.run([gp, "help", "trace"], capture_output=True, text=True)
    section = p.stdout.split("\nENVIRONMENT\n", 1)[-1].split("\n\n", 1)[0]
    entries = re.findall(r"^  (GPUPROF_\w+)(.*(?:\n {10,}.*)*)", section, re.M)
    if not entries:
        fail("gpuprof help trace: no ENVIRONMENT")
    table = {cells[0].strip("`"): cells[-1] for cells in rows(read("README.md")) if len(cells) == 2}
    for name, text in entries:
        if name not in table:
            fail("README.md: %s, in gpuprof help trace, is not in the table of variables" % name)
            continue
        said, readme = default_of(text), default_of(table[name])
        if said is not None and (readme is None or not readme.startswith(said)):
            fail("%s: default %r in gpuprof help trace, %r in README.md" % (name, said, readme))


def main():
    gp = sys.argv[1]
    check_figures(gp)
    check_compare_matching(gp)
    check_environment(gp)
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
