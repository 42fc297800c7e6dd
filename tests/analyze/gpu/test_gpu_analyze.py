"""GPU tests of `gpuprof analyze`: the stories of samples/pytorch/ (and the
OOM retry of scenarios.py) traced with `gpuprof --trace`, analyzed, and the
diagnosis checked against what PyTorch itself measured in the same run (the
GPUPROF_TORCH_EXPECT line each prints, samples/pytorch/README.md).

  test_gpu_analyze.py GPUPROF CASE
  test_gpu_analyze.py --list   the cases, one a line (CTest's)

CASE  what must hold
leak  outputs_list_leak gpu: a leak at the rate memory_allocated() grew, held
      by fwd:lm_head; cpu: no leak. losses_with_graph graph: a leak at its
      rate, in fwd:blocks.N.act; item: none
oom   batch_too_large: the failed request, in fwd:blocks.<oom_block>.act,
      activations to blame; the peak = max_memory_allocated
grad  inference_no_grad: each peak = max_memory_allocated; grad's is higher,
      by activations; grad (and only grad) advised torch.no_grad(), with at
      least what no_grad saved and within an activation of it
amp   amp_vs_fp32: each peak = max_memory_allocated; amp's is lower
frag  fragmentation (native mode): reserved = max_memory_reserved, far lower
      with expandable segments, the gap to allocated when the trace knows
      it; default (and only default) advised expandable_segments, with at
      least what the setting saved and at most 10% more; scenarios.py frag: a failed cudaMalloc, PyTorch's cache released,
      the retry recovered, fragmentation advice

Exit 0 pass, 1 fail, 77 skipped (no GPU usable by PyTorch). Prints one
RESULT line; with GPUPROF_RESULTS set, appends it to that file. Traces and
reports stay in $GPUPROF_ANALYZE_WORK when set."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SAMPLES = os.path.join(ROOT, "samples", "pytorch")
MiB, GiB = 1 << 20, 1 << 30


def have_gpu():
    if shutil.which("nvidia-smi") is None:
        return False
    p = subprocess.run([sys.executable, "-c",
                        "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"],
                       capture_output=True)
    return p.returncode == 0


class Case:
    def __init__(self, gp, work):
        self.gp, self.work = gp, work
        self.notes, self.ok = [], True

    def check(self, cond, what):
        if not cond:
            self.ok = False
            self.notes.append("FAIL " + what)
        return cond

    def trace(self, name, script, *args, mode="tensor"):
        """Runs script under gpuprof; returns (trace, the EXPECT line as a dict)."""
        out = os.path.join(self.work, name + ".json.gz")
        path = script if os.path.isabs(script) else os.path.join(SAMPLES, script)
        p = subprocess.run([self.gp, "--trace", "--force", "--mode", mode, "-o", out, path] + list(args),
                           capture_output=True, text=True, timeout=900)
        open(os.path.join(self.work, name + ".out"), "w").write(p.stdout + p.stderr)
        exp = {}
        for line in p.stdout.splitlines():
            if line.startswith(("GPUPROF_TORCH_EXPECT ", "GPUPROF_EXPECT ")):
                exp = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
        if not exp:
            raise AssertionError("%s: no EXPECT line (exit %d): %s" % (name, p.returncode, p.stderr[-400:]))
        return out, exp

    def analyze(self, name, *paths):
        p = subprocess.run([self.gp, "analyze", "--json"] + list(paths), capture_output=True, text=True,
                           timeout=900)
        if p.returncode != 0:
            raise AssertionError("%s: analyze exit %d: %s" % (name, p.returncode, p.stderr.strip()))
        open(os.path.join(self.work, name + ".analyze.json"), "w").write(p.stdout)
        t = subprocess.run([self.gp, "analyze"] + list(paths), capture_output=True, text=True, timeout=900)
        open(os.path.join(self.work, name + ".analyze.txt"), "w").write(t.stdout)
        doc = json.loads(p.stdout)
        if not doc["devices"]:
            raise AssertionError("%s: no device in the report" % name)
        return doc["devices"][0]

    def run(self, name, script, *args, mode="tensor"):
        t, e = self.trace(name, script, *args, mode=mode)
        return self.analyze(name, t), e


def near(a, b, rel, slack=0):
    return abs(a - b) <= max(rel * abs(b), slack)


def nodes(tree, prefix=()):
    """(dotted path, node) for every node of a layer tree."""
    for n in tree or []:
        path = prefix + (n["name"],)
        yield ".".join(path), n
        yield from nodes(n.get("children"), path)


def biggest_leaf(tree):
    leaves = [(p, n) for p, n in nodes(tree) if not n.get("children")]
    return max(leaves, key=lambda x: x[1]["bytes"]) if leaves else (None, None)


def check_peak(c, name, d, e):
    ref = int(e["max_allocated"])
    got = d["peak"]["bytes"] if d["peak"] else 0
    c.check(near(got, ref, 0.005), "%s: peak %d vs max_memory_allocated %d" % (name, got, ref))
    return got


def acts(where):
    return {x["category"]: x["bytes"] for x in where.get("by_category") or []}.get("activations", 0)


def case_leak(c):
    for script, bad, good, layer_word in (("outputs_list_leak.py", "gpu", "cpu", "lm_head"),
                                          ("losses_with_graph.py", "graph", "item", ".act")):
        stem = script[:-3]
        d, e = c.run(stem + "." + bad, script, "--variant", bad)
        lk = d["leak"]
        want = int(e["leak_per_step"])
        rate = lk.get("rate_per_step") or 0
        c.check(lk["verdict"] == "leak", "%s %s: verdict %s" % (stem, bad, lk["verdict"]))
        c.check(near(rate, want, 0.05, 64 * 1024), "%s %s: rate %.0f vs %d B/step" % (stem, bad, rate, want))
        path, leaf = biggest_leaf((lk.get("survivors") or {}).get("by_layer"))
        c.check(path is not None and layer_word in path, "%s: survivors in %s" % (stem, path))
        c.check(lk.get("steps_until_full") is not None, "%s: steps until full" % stem)
        d2, _ = c.run(stem + "." + good, script, "--variant", good)
        c.check(d2["leak"]["verdict"] == "none", "%s %s: verdict %s" % (stem, good, d2["leak"]["verdict"]))
        c.notes.append("%s: %.1f MiB/step (torch %.1f) in %s, full in %s steps; %s: %s" % (
            stem, rate / MiB, want / MiB, path, lk.get("steps_until_full"), good, d2["leak"]["verdict"]))


def case_oom(c):
    d, e = c.run("batch_too_large", "batch_too_large.py")
    c.check(e.get("oom") == "1", "the program ran out of memory")
    check_peak(c, "batch_too_large", d, e)
    c.check(d["oom_count"] >= 1, "oom_count %d" % d["oom_count"])
    if not c.check(d["ooms"], "no oom in the report: nothing to check of the failed request"):
        return
    o = d["ooms"][0]
    want = int(e["oom_request_bytes"])
    c.check(near(o["request"], want, 0.001, 2 * MiB), "request %d vs %d" % (o["request"], want))
    layer = "blocks.%s.act" % e.get("oom_block")
    c.check(layer in (o["layer"] or ""), "layer %s, expected %s" % (o["layer"], layer))
    kinds = [a["kind"] for a in o["advice"]]
    c.check("activations" in kinds, "advice %s" % kinds)
    c.notes.append("request %.2f GiB in %s, phase %s, advice %s; live %.1f GiB, activations %.1f GiB" % (
        o["request"] / GiB, o["layer"], o["phase"], ",".join(kinds), o["device_total"] / GiB, acts(o) / GiB))


def case_grad(c):
    g, eg = c.run("inference.grad", "inference_no_grad.py", "--variant", "grad")
    n, en = c.run("inference.nograd", "inference_no_grad.py", "--variant", "nograd")
    pg, pn = check_peak(c, "grad", g, eg), check_peak(c, "nograd", n, en)
    c.check(pg > pn, "grad peak %d > no_grad peak %d" % (pg, pn))
    c.check(acts(g["peak"]) > acts(n["peak"]), "more activations at the peak with grad")
    adv = [a for a in g.get("advice") or [] if a["kind"] == "no_grad"]
    act = int(eg["activation_bytes"])
    if c.check(len(adv) == 1, "grad: no_grad advised (%r)" % g.get("advice")):
        c.check(pg - pn <= adv[0]["bytes"] <= pg - pn + act, "grad: advice %d bytes, no_grad saved %d" % (
            adv[0]["bytes"], pg - pn))
    c.check(not [a for a in n.get("advice") or [] if a["kind"] == "no_grad"], "nograd: not advised")
    c.notes.append("peak grad %.2f GiB (activations %.2f), no_grad %.2f GiB (activations %.2f)" % (
        pg / GiB, acts(g["peak"]) / GiB, pn / GiB, acts(n["peak"]) / GiB))


def case_amp(c):
    a, ea = c.run("amp", "amp_vs_fp32.py", "--variant", "amp")
    f, ef = c.run("fp32", "amp_vs_fp32.py", "--variant", "fp32")
    pa, pf = check_peak(c, "amp", a, ea), check_peak(c, "fp32", f, ef)
    c.check(pa < pf, "amp peak %d < fp32 peak %d" % (pa, pf))
    c.notes.append("peak amp %.2f GiB (activations %.2f), fp32 %.2f GiB (activations %.2f)" % (
        pa / GiB, acts(a["peak"]) / GiB, pf / GiB, acts(f["peak"]) / GiB))


def case_frag(c):
    d, e = c.run("frag.default", "fragmentation.py", "--variant", "default", mode="native")
    x, ex = c.run("frag.expandable", "fragmentation.py", "--variant", "expandable", mode="native")
    res = d["summary"]["reserved"]["peak"] or 0
    c.check(near(res, int(e["max_reserved"]), 0.01), "reserved peak %d vs max_memory_reserved %s" % (
        res, e["max_reserved"]))
    xres = x["summary"]["reserved"]["peak"] or 0
    c.check(xres < res / 2, "expandable segments: reserved %d, far below %d" % (xres, res))
    adv = [a for a in d.get("advice") or [] if a["kind"] == "expandable_segments"]
    fell = int(e["max_reserved"]) - int(ex["max_reserved"])
    if c.check(len(adv) == 1, "default: expandable_segments advised (%r)" % d.get("advice")):
        c.check(fell <= adv[0]["bytes"] <= fell * 1.1, "default: advice up to %d, the setting saved %d" % (
            adv[0]["bytes"], fell))
    c.check(not [a for a in x.get("advice") or [] if a["kind"] == "expandable_segments"],
            "expandable: not advised again")
    fr = d["summary"].get("cache") or d["summary"]["fragmentation"]
    if fr["known"] and fr["worst"] and fr["source"] == "segments":
        # the allocator hook: every block and segment, so the worst gap is
        # the story's own (it samples after each of its allocations and frees)
        c.check(fr["worst"]["gap"] == int(e["worst_gap"]), "worst gap %d vs %s exactly" % (
            fr["worst"]["gap"], e["worst_gap"]))
        gap = "worst gap %.2f GiB (torch %.2f), exact" % (fr["worst"]["gap"] / GiB, int(e["worst_gap"]) / GiB)
    elif fr["known"] and fr["worst"]:
        # without the hook its allocated bytes are sampled (gpuprof:torch.memory
        # marks, every 100 ms here and once at exit: the story takes steps of
        # its own), so the worst gap seen is one of the gaps the story had:
        # above zero, never above its worst
        c.check(0 < fr["worst"]["gap"] <= int(e["worst_gap"]) * 1.01, "worst gap %d vs %s" % (
            fr["worst"]["gap"], e["worst_gap"]))
        gap = "worst gap %.2f GiB (torch %.2f)" % (fr["worst"]["gap"] / GiB, int(e["worst_gap"]) / GiB)
    elif fr["known"]:
        # marks were written, none of them while a segment stood unused: the
        # story had a gap (worst_gap), so the report missed it
        gap = "no gap at any gpuprof:torch.memory mark"
        c.check(int(e["worst_gap"]) <= 0, "fragmentation: no gap found, the story's worst was %s bytes" %
                e["worst_gap"])
    else:
        gap = "gap not known: %s" % (fr.get("why") or "no gpuprof:torch.memory marks")
        c.check(False, "fragmentation: %s; native mode's hooks must mark PyTorch's memory" % gap)
    t, ef = c.trace("frag.retry", os.path.join(HERE, "scenarios.py"), "frag", mode="native")
    r = c.analyze("frag.retry", t)
    c.check(r["oom_count"] >= 1, "retry scenario: a failed cudaMalloc (oom_count %d)" % r["oom_count"])
    kinds = []
    if c.check(r["ooms"], "retry scenario: no oom in the report: nothing to check of the retry"):
        o = r["ooms"][0]
        kinds = [a["kind"] for a in o["advice"]]
        c.check(near(o["request"], int(ef["request"]), 0.01, 2 * MiB), "retry: request %d" % o["request"])
        c.check(o["released_after"] >= GiB, "retry: cached segments released %d" % o["released_after"])
        c.check(o["recovered"], "retry: succeeded")
        c.check("fragmentation" in kinds, "retry: advice %s" % kinds)
    c.notes.append("reserved %.2f GiB default, %.2f GiB expandable; %s; retry advice %s" % (
        res / GiB, xres / GiB, gap, ",".join(kinds)))


CASES = {"leak": case_leak, "oom": case_oom, "grad": case_grad, "amp": case_amp, "frag": case_frag}


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        raise SystemExit(__doc__)
    gp, name = os.path.abspath(sys.argv[1]), sys.argv[2]
    if not have_gpu():
        print("SKIP: no GPU usable by PyTorch here")
        return 77
    keep = os.environ.get("GPUPROF_ANALYZE_WORK")
    work = keep or tempfile.mkdtemp(prefix="gpuprof-analyze-gpu.")
    os.makedirs(work, exist_ok=True)
    c = Case(gp, work)
    try:
        CASES[name](c)
    except (AssertionError, subprocess.TimeoutExpired, OSError, ValueError, KeyError, TypeError) as e:
        c.ok = False
        c.notes.append("ERROR %r" % (e,))
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    line = "RESULT analyze.%s %s %s" % (name, "PASS" if c.ok else "FAIL", "; ".join(c.notes))
    print(line)
    res = os.environ.get("GPUPROF_RESULTS")
    if res:
        with open(res, "a") as f:
            f.write(line + "\n")
    return 0 if c.ok else 1


if __name__ == "__main__":
    sys.exit(main())
