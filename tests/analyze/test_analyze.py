"""Tests of `gpuprof analyze` on synthetic traces whose answers synth.py
knows (it keeps its own account of what is alive and what each allocation
is), on the real H100 trace in samples/traces/, on bad input, and against
golden reports.

  test_analyze.py GPUPROF TEST [--update]

TEST is one of the functions named test_* below, without the prefix.
--update rewrites the golden files (golden/) instead of comparing.
Exit 0 when every check passed, 1 otherwise."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "exporters"))
import checks  # noqa: E402
import synth  # noqa: E402
from checks import check, eq, report  # noqa: E402
from trace_format import CAT, EV, F, KIND, T  # noqa: E402  (the names of the trace)

MiB, GiB = synth.MiB, synth.GiB
GP = None
TMP = None




def gp_cmd(*args, env=None):
    """gpuprof ARGS... in TMP: (exit status, stdout, stderr)."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    p = subprocess.run([GP] + list(args), cwd=TMP, capture_output=True, env=e, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run(*args, env=None):
    return gp_cmd("analyze", *args, env=env)


def analyze_json(*paths):
    rc, out, err = run("--json", *paths)
    if not check(rc == 0, "analyze --json %s: exit %d, stderr %s" % (" ".join(paths), rc, err.strip())):
        raise SystemExit(report())
    return json.loads(out), err


def make(scenario):
    synth.scenario(scenario, TMP)
    return json.load(open(os.path.join(TMP, scenario + ".expected.json")))


def dev(doc, i=0):
    return doc["devices"][i]


def cats(arr):
    return {c["category"]: c["bytes"] for c in arr or []}


def find_node(tree, path):
    """The node of a layer tree at path (a list of names)."""
    level = tree
    node = None
    for name in path:
        node = next((n for n in level if n["name"] == name), None)
        if node is None:
            return None
        level = node.get("children", [])
    return node



# ---- the tests ----

def test_train():
    """Peak: when, how much, by layer/category/phase/API, top N; summary."""
    exp = make("train")
    doc, _ = analyze_json("train.json.gz")
    eq(doc["schema"], "gpuprof.analyze/1", "schema")
    d = dev(doc)
    p, e = d["peak"], exp["peak"]
    eq(p["what"], "allocated", "peak what")
    eq(p["bytes"], e["bytes"], "peak bytes")
    eq(p["t"], round(e["t_us"] / 1e6, 6), "peak time")
    eq(p["step"], e["step"], "peak step")
    eq(p["phase"], e["phase"], "peak phase")
    eq(p["layer"], e["layer"], "peak layer")
    eq(p["other"], e["other"], "other memory at the peak")
    eq(cats(p["by_category"]), e["categories"], "categories at the peak")
    eq(sum(c["bytes"] for c in p["by_category"]), p["live_bytes"], "categories add up")
    got_top = [{"bytes": t["bytes"], "layer": t["layer"], "category": t["category"], "step": t["step"]}
               for t in p["top"][:5]]
    eq(got_top, e["top"], "top allocations")
    eq(len(p["top"]), 10, "--top default")
    net = find_node(p["by_layer"], ["<Net>"])
    check(net is not None, "layer tree has <Net>")
    if net:
        fc1, fc2 = find_node(net["children"], ["fc1"]), find_node(net["children"], ["fc2"])
        live = [r for r in exp["peak"]["top"]]  # noqa: F841 (kept for reading)
        eq(net["bytes"], fc1["bytes"] + fc2["bytes"], "<Net> = fc1 + fc2 (nothing made in <Net> itself)")
        eq(fc1["bytes"], 96 * MiB + 8 * MiB, "fc1: its activation and the cuBLAS workspace")
        eq(fc2["bytes"], 48 * MiB + 32 * MiB + 24 * MiB, "fc2: activation, gradient, temporary")
        eq(round(net["share"], 4), round(net["bytes"] / p["live_bytes"], 4), "<Net> share")
    s = d["summary"]
    eq(s["allocated"]["peak"], e["bytes"], "summary peak allocated")
    eq(s["reserved"]["peak"], 512 * MiB, "reserved peak (the pool's size)")
    eq(s["other"]["end"], 8 * MiB, "other at the end")
    eq(s["allocated"]["end"], 400 * MiB, "allocated at the end")
    eq(s["allocations"], 60, "allocations by PyTorch")
    eq(s["frees"], 51, "frees")
    eq(s["fragmentation"]["known"], True, "fragmentation known in tensor mode")
    eq(s["fragmentation"]["worst"]["gap"], 208 * MiB, "worst fragmentation")
    eq(d["leak"]["verdict"], "too few steps", "6 steps: too few after the warm-up")
    eq([x["live"] for x in d["steps"]["series"]], [400 * MiB] * 6, "live at step boundaries")
    rc, out, err = run("train.json.gz")
    eq(rc, 0, "text exit status")
    check("Peak: 504 MiB allocated at 0.042 s, step 2, backward" in out, "text peak line")
    check("\033[" not in out, "no color when stdout is not a terminal")
    eq(err, "", "nothing on stderr")
    rc, out, _ = run("--top", "3", "--json", "train.json.gz")
    eq(len(json.loads(out)["devices"][0]["peak"]["top"]), 3, "--top 3")


def test_callbacks():
    """Stream-ordered allocations as the recorder's API callbacks write them
    in tensor mode (thread and API in the event, the driver call's corr that
    no API event has, no pool args): attributed as those with API events."""
    make("train")
    sim = synth.Sim(callbacks=True)
    synth.train(sim, 6)
    sim.write(os.path.join(TMP, "train.callbacks.json.gz"))
    base, _ = analyze_json("train.json.gz")
    doc, err = analyze_json("train.callbacks.json.gz")
    p, b = dev(doc)["peak"], dev(base)["peak"]
    for k in ("bytes", "t", "step", "phase", "layer", "other", "by_category", "by_layer", "by_phase"):
        eq(p[k], b[k], "callbacks: peak %s as with API events" % k)
    eq([(t["bytes"], t["layer"], t["category"], t["step"], t["phase"]) for t in p["top"]],
       [(t["bytes"], t["layer"], t["category"], t["step"], t["phase"]) for t in b["top"]],
       "callbacks: top allocations as with API events")
    eq(sorted(x["api"] for x in p["by_api"]), ["cuMemAllocAsync", "cudaMalloc"],
       "callbacks: by API, the driver call (and cuBLAS's cudaMalloc)")
    eq(doc["traces"][0]["unattributed_allocations"], 0, "callbacks: every allocation attributed")
    eq(dev(doc)["summary"]["allocations"], dev(base)["summary"]["allocations"], "callbacks: allocations")
    eq(p["reserved"], None, "callbacks: no pool records, reserved unknown")
    eq(err, "", "callbacks: nothing on stderr")


def test_statics():
    """Module globals not recorded (GPUPROF_RECORD without statics): said in
    a note, the numbers as before; recorded: no note."""
    make("train")
    base, _ = analyze_json("train.json.gz")
    check(not any("module globals" in n for n in base["traces"][0]["notes"]),
          "statics unsaid (run): no note")
    for statics in ("none", "run"):
        sim = synth.Sim(statics=statics)
        synth.train(sim, 6)
        name = "train.statics_%s.json.gz" % statics
        sim.write(os.path.join(TMP, name))
        doc, err = analyze_json(name)
        eq(err, "", "%s: nothing on stderr" % statics)
        eq(dev(doc)["peak"], dev(base)["peak"], "%s: the peak as without" % statics)
        notes = [n for n in doc["traces"][0]["notes"] if "module globals" in n]
        if statics == "none":
            eq(len(notes), 1, "none: one note")
            check(notes and "were not recorded" in notes[0], "none: says so: %r" % notes)
        else:
            eq(notes, [], "run: no note")


def test_labels():
    """What reads wrong for a PyTorch user: the phase "none" is shown as
    "(no phase)" (the JSON keeps "none"); module globals and pinned host
    memory are one line below the memory table, not rows of it (a CUDA
    program keeps them as rows)."""
    sim = synth.Sim()
    for _ in range(3):
        sim.alloc(100 * 1024, "other", kind=KIND.DEVICE_STATIC, async_=False, api="cuModuleLoadData")
    sim.alloc(4, "other", kind=KIND.PINNED_HOST, async_=False, api="cudaHostAlloc")
    synth.train(sim, 6)
    sim.write(os.path.join(TMP, "labels.json.gz"))
    doc, _ = analyze_json("labels.json.gz")
    d = dev(doc)
    eq({k: v["allocations"] for k, v in d["summary"]["kinds"].items()}, {"device_static": 3, "pinned_host": 1},
       "the kinds kept in the JSON")
    check("none" in [x["phase"] for x in d["peak"]["by_phase"]], "the JSON's phase is still none")
    rc, out, _ = run("labels.json.gz")
    eq(rc, 0, "text exit status")
    table = out[out.index("  memory "):out.index("  allocations:")]
    check("device_static" not in table and "pinned_host" not in table,
          "no device_static nor pinned_host row in a PyTorch process's memory table:\n%s" % table)
    want = ("  not counted above: 300 KiB of device_static (a module's device globals, 3 allocations), "
            "4 B of pinned_host (page-locked host memory, 1 allocation)\n")
    check(want in out, "one line below the table says what was not counted (%r)" %
          [ln for ln in out.splitlines() if "counted" in ln])
    check("(not counted above)" not in out, "no line per kind")
    phases = out[out.index("by phase (when made)"):]
    phases = phases[:phases.index("\n\n")]
    check(re.search(r"^ *\(no phase\) ", phases, re.M) and not re.search(r"^ *none ", phases, re.M),
          "by phase: (no phase), not none:\n%s" % phases)
    top = out[out.index("largest allocations"):]
    check(" (no phase) " in top and not re.search(r" none +parameters", top), "top: the phase column says (no phase)")
    # a CUDA program: the kinds stay rows of its table
    sim = synth.Sim(mode="cuda", cmdline="./app")
    sim.alloc(100 * 1024, "other", kind=KIND.DEVICE_STATIC, async_=False, api="cuModuleLoadData")
    sim.alloc(MiB, "other")
    sim.write(os.path.join(TMP, "labels_cuda.json.gz"))
    rc, out, _ = run("labels_cuda.json.gz")
    check(re.search(r"^  device_static +100 KiB +100 KiB", out, re.M), "cuda: the row kept:\n%s" % out[:600])


def test_teardown():
    """The model freed at exit: its tensors stay parameters."""
    exp = make("teardown")
    doc, _ = analyze_json("teardown.json.gz")
    p = dev(doc)["peak"]
    eq(cats(p["by_category"]), exp["peak"]["categories"],
       "categories at the peak when the model is freed at exit (parameters stay parameters)")
    return report()


def test_nomodel():
    """A script with no nn.Module (plain tensors, no forward, no step): no
    parameters; its tensors are PyTorch's, made outside modules and phases."""
    exp = make("nomodel")
    doc, _ = analyze_json("nomodel.json.gz")
    p = dev(doc)["peak"]
    eq(p["bytes"], exp["peak"]["bytes"], "nomodel: peak")
    got = cats(p["by_category"])
    check("parameters" not in got, "nomodel: no parameters without a model (%r)" % got)
    eq(got, {"other": exp["peak"]["bytes"]}, "nomodel: every tensor is other")
    other = next((c for c in p["by_category"] if c["category"] == "other"), {})
    eq([b["name"] for b in other.get("by") or []], ["PyTorch, outside modules and phases"],
       "nomodel: what the other memory is")
    eq({t["category"] for t in p["top"]}, {"other"}, "nomodel: the largest allocations are no parameters")
    rc, out, _ = run("nomodel.json.gz")
    check(rc == 0 and not re.search(r"^ *parameters ", out, re.M), "nomodel text: no parameters row")


def test_blocks():
    """A GPT-2-like model's 12 blocks: siblings of equal bytes by number (2
    before 11); alike blocks one row ("1-6,8-11 (10 alike, each 10.0 MiB)",
    its totals the sum of its members, the first one's children shown once),
    the ones that differ (block 0 leaks, block 7 holds 3% more) apart; the
    JSON keeps every block."""
    make("blocks")
    doc, _ = analyze_json("blocks.json.gz")
    h = find_node(dev(doc)["peak"]["by_layer"], ["<GPT2>", "transformer", "h"])
    if not check(h is not None, "blocks: the tree has <GPT2>.transformer.h"):
        return
    kids = h["children"]
    eq([k["name"] for k in kids], ["1", "2", "3", "4", "5", "6", "8", "9", "10", "11", "0", "7"],
       "blocks: the alike run by number, then the others largest first")
    eq(sum(k["bytes"] for k in kids), h["bytes"], "blocks: every block kept, adding up to h")
    check(all(sorted(c["name"] for c in k.get("children", [])) == ["attn", "mlp"] for k in kids),
          "blocks: every block keeps its children")
    run_ = kids[0].get("alike") or {}
    members = kids[:run_.get("siblings", 0)]
    eq({x: run_.get(x) for x in ("siblings", "label", "bytes", "count", "min_bytes", "max_bytes")},
       {"siblings": 10, "label": "1-6,8-11 (10 alike, each 10.0 MiB)", "bytes": sum(k["bytes"] for k in members),
        "count": sum(k["count"] for k in members), "min_bytes": 10 * MiB, "max_bytes": 10 * MiB + 4096},
       "blocks: the run and its totals")
    eq(run_.get("share"), round(run_.get("bytes", 0) / dev(doc)["peak"]["live_bytes"], 4), "blocks: the run's share")
    eq([k["name"] for k in kids[1:] if "alike" in k], [], "blocks: only the run's first says it")
    rc, out, _ = run("blocks.json.gz")
    rows = out[out.index("by layer (module path)"):].split("\n\n")[0]
    check(re.search(r"^ {8}1-6,8-11 \(10 alike, each 10\.0 MiB\) +100 MiB +76\.2% +20$", rows, re.M),
          "blocks text: the run's row with its totals:\n%s" % rows)
    eq(len(re.findall(r"^ {10}each: (attn|mlp) ", rows, re.M)), 2, "blocks text: the first one's children once")
    check(re.search(r"^ {8}0 +13\.0 MiB", rows, re.M) and re.search(r"^ {8}7 +10\.2 MiB", rows, re.M),
          "blocks text: the blocks that differ on their own")
    eq(len(rows.splitlines()), 13, "blocks text: a heading and 12 rows, not 38")
    # all alike: one row down the chain, "h.0-11"
    sim = synth.Sim(total=16 * GiB)
    synth.gpt_blocks(sim, leak0=0)
    sim.write(os.path.join(TMP, "blocks_alike.json.gz"))
    rc, out, _ = run("blocks_alike.json.gz")
    check(re.search(r"^ {6}h\.0-11 \(12 alike, each 10\.0 MiB\) +120 MiB +93\.8% +24$", out, re.M),
          "blocks text: twelve alike blocks, one row:\n%s" % out[out.index("by layer"):][:600])
    # equal bytes, not alike: by name, numbers as numbers
    sim = synth.Sim(total=16 * GiB)
    sim.torch_info()
    sim.push("fwd:<Net>")
    for path in ("layer11", "layer2", "stack.11.a", "stack.2.b"):
        sim.push("fwd:" + path)
        sim.alloc(MiB, "activations")
        sim.pop()
    sim.pop()
    sim.write(os.path.join(TMP, "names.json.gz"))
    doc, _ = analyze_json("names.json.gz")
    net = find_node(dev(doc)["peak"]["by_layer"], ["<Net>"])
    eq([k["name"] for k in net["children"]], ["stack", "layer2", "layer11"], "names: 2 before 11")
    eq([k["name"] for k in net["children"][0]["children"]], ["2", "11"], "names: numbered siblings by number")
    # 200 numbered siblings of two shapes: two runs, their labels cut short
    sim = synth.Sim(total=16 * GiB)
    sim.torch_info()
    sim.push("fwd:<Net>")
    for i in range(200):
        sim.push("fwd:h.%d.%s" % (i, "odd" if i % 2 else "even"))
        sim.alloc(4096, "activations")
        sim.pop()
    sim.pop()
    sim.write(os.path.join(TMP, "siblings.json.gz"))
    doc, _ = analyze_json("siblings.json.gz")
    h = find_node(dev(doc)["peak"]["by_layer"], ["<Net>", "h"])
    runs = [k["alike"] for k in h["children"] if "alike" in k]
    eq([r["siblings"] for r in runs], [100, 100], "siblings: one run per shape")
    eq([r["label"] for r in runs],
       ["0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,... (100 alike, each 4.00 KiB)",
        "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,... (100 alike, each 4.00 KiB)"], "siblings: labels cut short")


def test_leak():
    """Growth per step, its layer and phase, steps until full."""
    exp = make("leak")
    doc, _ = analyze_json("leak.json.gz")
    lk = dev(doc)["leak"]
    eq(lk["verdict"], "leak", "verdict")
    eq(round(lk["rate_per_step"]), exp["leak"]["rate"], "rate per step")
    eq(lk["since_step"], 4, "since the end of the warm-up")
    check(lk["r2"] > 0.999, "a straight line (r2 %r)" % lk["r2"])
    eq(lk["steps_until_full"], exp["leak"]["steps_until_full"], "steps until the device is full")
    sv = lk.get("survivors") or {}
    eq(round(sv.get("per_step", 0)), 3 * MiB, "survivors per step")
    tree = sv.get("by_layer") or []
    node = find_node(tree, ["<Net>", "fc2"])
    check(node is not None and node["share"] == 1.0, "the leak's layer is <Net>.fc2 (%r)" % tree)
    eq([x["phase"] for x in sv.get("by_phase") or []], ["forward"], "made in forward")
    rc, out, _ = run("leak.json.gz")
    check("Leak: +3.00 MiB per step since step 4" in out, "text leak line")
    check("<Net>.fc2" in out, "text names the leaking layer")


def test_warmup():
    """Growth in the first steps, then flat: no false alarm."""
    exp = make("warmup")
    doc, _ = analyze_json("warmup.json.gz")
    d = dev(doc)
    eq([x["live"] for x in d["steps"]["series"]], exp["series"], "series")
    check(exp["series"][4] > exp["series"][0], "the scenario grows during its warm-up")
    eq(d["leak"]["verdict"], "none", "growth in the first steps, then flat: no leak")


def test_oom():
    """A failed allocation: request, who held what, advice; cut short."""
    exp = make("oom")
    doc, err = analyze_json("oom.json.gz")
    t = doc["traces"][0]
    eq(t["cut_short"], True, "the program died: trace cut short")
    eq(t["complete"], False, "not complete")
    check(any("cut short" in n for n in t["notes"]), "a note says so")
    check("was cut short" in err, "and stderr says so")
    d = dev(doc)
    eq(d["oom_count"], 1, "one failed allocation")
    o, e = d["ooms"][0], exp["oom"]
    eq(o["request"], e["request"], "request")
    eq(o["step"], e["step"], "step")
    eq(o["phase"], e["phase"], "phase")
    eq(o["layer"], e["layer"], "layer")
    eq(o["free"], e["free"], "free")
    eq(o["allocated"], e["allocated"], "allocated at the failure")
    eq(cats(o["by_category"]), e["categories"], "who held it")
    c = o["collectives"]
    eq([x["op"] for x in c["during"]], e["collectives"]["during"], "the all-reduce running at the failure")
    eq(d["peak"]["collectives"]["during"], [], "none at the peak, before it")
    kinds = [a["kind"] for a in o["advice"]]
    eq(kinds, ["large_request", "activations"], "advice: the request is 44% of the device")
    check("<Net>.fc1" in o["advice"][1]["text"], "advice names the largest layer")


def test_native():
    """Native mode: PyTorch's segments vs other libraries (two passes), allocated and fragmentation
    from gpuprof:torch.memory marks."""
    exp = make("native")
    doc, _ = analyze_json("native.json.gz")
    d = dev(doc)
    s = d["summary"]
    eq(s["reserved"]["peak"], exp["reserved_peak"], "reserved peak: PyTorch's segments only")
    eq(s["reserved"]["end"], exp["reserved_end"], "reserved at the end")
    eq(s["other"]["end"], exp["other"], "the unnamed workspace is not PyTorch's")
    # allocated inside the segments: known only from gpuprof:torch.memory marks
    eq((s["allocated"]["known"], s["allocated"]["source"]), (True, "torch marks"), "allocated from marks")
    eq(s["allocated"]["peak"], exp["allocated_peak"], "allocated peak (marks)")
    eq(s["allocated"]["end"], exp["allocated_end"], "allocated at the end (marks)")
    eq(s["fragmentation"]["known"], True, "fragmentation known from the marks")
    eq(s["fragmentation"]["worst"]["gap"], exp["worst_gap"], "worst reserved - allocated")
    eq((s["fragmentation"]["worst"]["step"], s["fragmentation"]["worst"]["step_when"]), (2, "after"),
       "after step 2's mark, the last: the program's tail, not a step 3")
    eq(d["peak"]["what"], "reserved", "the peak is of reserved memory")
    eq(d["peak"]["bytes"], exp["reserved_peak"], "peak")
    other = [c for c in d["peak"]["by_category"] if c["category"] == "other"]
    eq([(b["name"], b["bytes"]) for b in other[0]["by"]] if other else None, [("cudaMalloc", 64 * MiB)],
       "other, by API")


def test_native_nomarks():
    """Without gpuprof:torch.memory marks, native mode says what it cannot know."""
    sim = synth.Sim(mode="native", total=8 * GiB)
    sim.torch_info()
    sim.alloc(20 * MiB, "parameters")
    sim.mark("step:1")
    sim.name_segments()
    sim.write(os.path.join(TMP, "native_nomarks.json.gz"))
    doc, _ = analyze_json("native_nomarks.json.gz")
    s = dev(doc)["summary"]
    eq(s["allocated"]["known"], False, "allocated is not known from CUDA alone")
    eq(s["fragmentation"]["known"], False, "so neither is fragmentation")
    check("not known from CUDA alone" in (s["fragmentation"]["why"] or ""), "and it says why")
    rc, out, _ = run("native_nomarks.json.gz")
    check("(not known from CUDA alone)" in out, "text says allocated is not known")


def test_steps():
    """Steps are the program's (CATEGORIES.md, "Step"): what comes before
    the first forward is before step 1; what follows the last step mark is
    after it, unless a step began there (a backward, or a failed
    allocation); text, JSON and the timeline's step facts agree."""
    def program(path, tail):
        sim = synth.Sim(mode="native", total=8 * GiB)
        sim.torch_info()
        params = sim.alloc(96 * MiB, "parameters")  # the model, built before any step
        for step in (1, 2):
            sim.push("fwd:<Net>")
            act = sim.alloc(32 * MiB, "activations", fw=True)
            sim.pop()
            sim.push("phase:backward")
            sim.free(act)
            sim.pop()
            sim.push("phase:optimizer.step")
            sim.pop()
            sim.mark("step:%d" % step)
            sim.push("phase:zero_grad")  # after the optimizer's step and its mark
            sim.pop()
        if tail == "eval":
            sim.push("fwd:<Net>")
            sim.alloc(200 * MiB, "activations", fw=True)  # kept: the peak, in the tail
            sim.pop()
        else:
            sim.push("fwd:<Net>")
            sim.alloc(200 * MiB, "activations", fw=True)
            sim.pop()
            sim.push("phase:backward")  # a third step began, and never ended
            sim.alloc(8 * MiB, "gradients")
            sim.pop()
        sim.write(os.path.join(TMP, path))
        del params

    for tail, want in (("eval", (2, "after", "after step 2")), ("step", (3, "in", "step 3"))):
        path = "steps_%s.json.gz" % tail
        program(path, tail)
        doc, _ = analyze_json(path)
        d = dev(doc)
        pk = d["peak"]
        eq((pk["step"], pk["step_when"]), want[:2], "%s: the peak's step" % tail)
        eq(d["steps"]["count"], 2, "%s: two step marks" % tail)
        eq(d["steps"]["unfinished"], tail == "step", "%s: a step after the last mark began" % tail)
        check(isinstance(d["steps"]["begin_t"], float) and d["steps"]["begin_t"] > 0, "%s: step 1's start" % tail)
        top = {a["bytes"]: (a["step"], a["step_when"]) for a in pk["top"]}
        eq(top.get(96 * MiB), (1, "before"), "%s: the parameters, made before step 1" % tail)
        rc, out, _ = run(path)
        check(("Peak: 200 MiB allocated at " in out or "Peak: " in out) and want[2] + "," in out.split("Peak:")[1].splitlines()[0],
              "%s: the text's peak says %r" % (tail, want[2]))
        check("step 3" not in out if tail == "eval" else True, "eval: no step 3 anywhere in the text")
        check("before 1" in out, "%s: the largest allocations say 'before 1'" % tail)


def test_growth_no_leak():
    """A batch that doubles each step (samples/traces/batch_doubling): live
    memory at the step marks grows, but nothing a step made is left for
    the next: growth, not a leak, in the verdict and in the failure's
    advice alike."""
    doc, _ = analyze_json(os.path.join(ROOT, "samples", "traces", "batch_doubling.h100.json.gz"))
    d = dev(doc)
    check(d["growth"] is not None, "each step's peak grew: growth")
    eq(d["leak"]["verdict"], "none", "nothing left behind: no leak")
    check("leaves nothing behind" in (d["leak"].get("why") or ""), "the verdict says why")
    kinds = [a["kind"] for o in d["ooms"] for a in o["advice"]]
    check("held_from_earlier_steps" not in kinds or all(
        "see Leaks" not in a["text"] for o in d["ooms"] for a in o["advice"]),
        "no failure's advice points to a leak there is not: %s" % kinds)
    rc, out, _ = run(os.path.join(ROOT, "samples", "traces", "batch_doubling.h100.json.gz"))
    check("Leak: +" not in out, "the text reports no leak")


def test_native_oom():
    """Retry after releasing cached segments: fragmentation advice."""
    exp = make("native_oom")
    doc, _ = analyze_json("native_oom.json.gz")
    d = dev(doc)
    eq(d["oom_count"], 1, "a retry is the same failure")
    o = d["ooms"][0]
    eq(o["retries"], exp["oom"]["retries"], "retries")
    eq(o["released_after"], exp["oom"]["released"], "cached segments released after the failure")
    eq(o["recovered"], False, "not recovered")
    kinds = [a["kind"] for a in o["advice"]]
    check("fragmentation" in kinds, "fragmentation advice (%r)" % kinds)
    check(any("expandable_segments:True" in a["text"] for a in o["advice"]), "names expandable_segments")
    check(any("not name its segments" in n for n in doc["traces"][0]["notes"]),
          "says PyTorch did not name its segments")


def test_hook():
    """Native mode with gpuprof's allocator hook (--stacks): PyTorch's blocks
    are the allocations, its segments reserved, the cudaMalloc behind each
    segment neither; parameters named after their modules; source lines."""
    exp = make("hook")
    doc, err = analyze_json("hook.json.gz")
    d = dev(doc)
    p, e = d["peak"], exp["peak"]
    s = d["summary"]
    eq(err, "", "nothing on stderr")
    eq(doc["traces"][0]["allocator_hook"], {"attached": True, "stacks": True, "why": None,
                                            "allocated_before": 0, "reserved_before": 0,
                                            "sizes_guessed": 0}, "allocator_hook")
    eq(doc["traces"][0]["notes"], [], "no notes")
    eq((s["allocated"]["source"], s["reserved"]["source"]), ("blocks", "segments"), "sources")
    eq(p["what"], "allocated", "peak what")
    eq(p["bytes"], e["bytes"], "peak: the blocks' sum")
    eq(p["t"], round(e["t_us"] / 1e6, 6), "peak time")
    eq((p["step"], p["phase"], p["layer"]), (e["step"], e["phase"], e["layer"]), "peak step, phase, layer")
    eq(s["allocated"]["peak"], e["bytes"], "summary: allocated peak")
    eq(s["allocated"]["end"], exp["allocated_end"], "summary: allocated at the end")
    eq(s["reserved"]["peak"], exp["reserved_peak"], "summary: reserved peak (segments)")
    eq(s["reserved"]["end"], exp["reserved_end"], "summary: reserved at the end")
    eq(p["reserved"], e["reserved"], "reserved at the peak")
    eq(s["other"]["peak"], exp["other_peak"], "other: cuBLAS only, not the segments' cudaMallocs")
    eq(p["device_total"], e["reserved"] + e["other"], "device total at the peak: segments and other")
    eq(s["fragmentation"]["worst"]["gap"], exp["worst_gap"], "worst gap: segments less blocks")
    eq(cats(p["by_category"]), e["categories"], "categories at the peak")
    eq(sum(c["bytes"] for c in p["by_category"]), p["live_bytes"], "categories add up")
    got_top = [{"bytes": t["bytes"], "layer": t["layer"], "category": t["category"], "step": t["step"]}
               for t in p["top"][:5]]
    eq(got_top, e["top"], "top allocations, parameters under their module")
    want_lines = {None if k == "None" else k: v for k, v in e["lines"].items()}
    eq({x["name"] if x["line"] is not None else None: x["bytes"] for x in p["by_line"]}, want_lines,
       "bytes by source line at the peak")
    fc1 = next(x for x in p["by_line"] if x["name"] == "train.py:41 in forward")
    eq((fc1["file"], fc1["line"], fc1["function"], fc1["stack"], fc1["library_frames"]),
       ("/work/train.py", 41, "forward", ["train.py:41 in forward", "train.py:120 in <module>"], 1),
       "a line's file, function, the program's frames, the library's folded")
    eq(p["attributed"]["bytes"], p["bytes"], "attributed: of PyTorch's bytes, the peak")
    eq(p["attributed"]["line"], sum(v for k, v in want_lines.items() if k), "PyTorch's bytes with a line")
    eq(p["attributed"]["either"], p["bytes"], "every byte of PyTorch's has a module or a line")
    top = p["top"][0]
    eq((top["line"], top["requested"]), ("train.py:41 in forward", 96 * MiB), "top: line, requested")
    rc, out, _ = run("hook.json.gz")
    check("by source line" in out and "train.py:41 in forward" in out and "called from train.py:120" in out,
          "text: by source line")
    check("reserved (segments)" in out and "allocated (sampled)" not in out, "text: exact allocated")
    # the same run without --stacks: lines for the blocks no module names
    # and those made during backward(), backward()'s caller's
    sim = synth.HookSim(stacks=False, total=8 * GiB)
    synth.train(sim, 6)
    sim.write(os.path.join(TMP, "hook_nostacks.json.gz"))
    doc2, _ = analyze_json("hook_nostacks.json.gz")
    p2 = dev(doc2)["peak"]
    want2 = synth.lines_of(sim.peak["live"])
    check(want2.get("train.py:93 in main") and want2.get("train.py:90 in main") and want2.get(None),
          "the peak holds blocks with and without a line: %r" % (want2,))
    got2 = {(x["name"] if x["line"] is not None else None): x["bytes"] for x in p2["by_line"]}
    eq(got2, want2, "no stacks: by_line of what has a line")
    eq(next(x["name"] for x in p2["by_line"] if x["line"] is None), "(stack not read: --stacks)",
       "no stacks: the rest's name")
    eq((p2["attributed"]["line"], p2["top"][0]["line"]), (sum(v for k, v in want2.items() if k), None),
       "no stacks: a line where no module names a block")
    eq(p2["bytes"], p["bytes"], "no stacks: the same peak")
    # the loss's gradient, made before any module's backward range: no
    # module, but backward()'s line, with or without stacks
    sim = synth.HookSim(stacks=False, total=8 * GiB)
    synth.train(sim, 4, loss_grad=256 * MiB)
    sim.write(os.path.join(TMP, "hook_lossgrad.json.gz"))
    doc3, _ = analyze_json("hook_lossgrad.json.gz")
    p3 = dev(doc3)["peak"]
    eq((p3["bytes"], p3["phase"]), (sim.peak["bytes"], "backward"), "peak at the loss's gradient")
    check(p3["attributed"]["layer"] <= p3["bytes"] - 256 * MiB, "the loss's gradient has no module")
    eq(p3["attributed"]["either"], p3["bytes"], "without --stacks every byte has a module or a line")
    lg = next(t for t in p3["top"] if t["bytes"] == 256 * MiB)
    eq((lg["layer"], lg["line"]), (None, "train.py:93 in main"), "the loss's gradient: backward()'s line")
    # --ops: a block made inside an aten:: range is that op's, as in tensor mode
    sim = synth.HookSim(stacks=False, total=8 * GiB)
    sim.torch_info()
    sim.push("fwd:<Net>")
    sim.push("aten::mm, seq = 7")
    sim.alloc(64 * MiB, "activations")
    sim.pop()
    sim.alloc(16 * MiB, "activations")
    sim.pop()
    sim.write(os.path.join(TMP, "hook_ops.json.gz"))
    doc4, _ = analyze_json("hook_ops.json.gz")
    ops = {g["op"]: g["bytes"] for g in dev(doc4)["peak"]["by_op"]}
    eq(ops, {"aten::mm": 64 * MiB, "(no op range)": 16 * MiB}, "--ops: blocks by op")


def test_hook_leak():
    """Native mode with the allocator hook: a leak's survivors by layer and line, its exact rate."""
    exp = make("hook_leak")
    doc, _ = analyze_json("hook_leak.json.gz")
    lk = dev(doc)["leak"]
    eq(lk["verdict"], "leak", "a leak")
    eq(lk["rate_per_step"], exp["leak"]["rate"], "rate: the block's size per step, exactly")
    sv = lk["survivors"]
    eq(sv["by_layer"][0]["name"] + "." + sv["by_layer"][0]["children"][0]["name"]
       if sv["by_layer"][0].get("children") else sv["by_layer"][0]["name"], exp["leak"]["layer"],
       "survivors: the layer")
    eq(sv["by_line"][0]["name"], exp["leak"]["line"], "survivors: the line that made them")
    eq(sv["by_line"][0]["bytes"], sv["bytes"], "survivors: all from that line")


def test_hook_oom():
    """PyTorch's failed cudaMalloc and its OutOfMemoryError: one incident,
    PyTorch's, led by its own words; the batch that would get this far."""
    exp = make("hook_oom")
    doc, _ = analyze_json("hook_oom.json.gz")
    d = dev(doc)
    e = exp["oom"]
    eq(d["oom_count"], 1, "the cudaMalloc and PyTorch's error: one incident")
    o = d["ooms"][0]
    eq((o["raised"], o["request"], o["step"], o["phase"], o["layer"]),
       (True, e["request"], e["step"], e["phase"], e["layer"]), "raised, request, when, where")
    eq(o["pytorch"], {"request": e["request"], "block": e["block"], "allocated": e["allocated"],
                      "reserved": e["reserved"], "free": e["free"]}, "PyTorch's own numbers")
    eq(o["allocated"], e["allocated"], "allocated: the blocks live then")
    eq(cats(o["by_category"]), e["categories"], "categories of what was live")
    kinds = [a["kind"] for a in o["advice"]]
    check("large_request" in kinds and "activations" in kinds, "advice: %r" % kinds)
    rc, out, _ = run("hook_oom.json.gz")
    check("PyTorch raised OutOfMemoryError: Tried to allocate 3.50 GiB" in out, "text: PyTorch's words")
    # a forward that cannot reach this request at this batch: the share that could
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    sim.alloc(256 * MiB, "parameters")
    sim.push("fwd:<Net>")
    sim.push("fwd:fc1")
    acts = [sim.alloc(2 * GiB, "activations") for _ in range(3)]
    o = sim.oom(2 * GiB, context=0)
    sim.write(os.path.join(TMP, "hook_batch.json.gz"), cut="flush")
    doc, _ = analyze_json("hook_batch.json.gz")
    act = next(a for a in dev(doc)["ooms"][0]["advice"] if a["kind"] == "activations")
    f = (3 * 2 * GiB + (sim.reserved - sim.fw) + o["free"]) / (3 * 2 * GiB + o["request"])
    check("at most %.2f times this batch gets this far" % f in act["text"], "the batch that fits: %.2f in %r"
          % (f, act["text"]))
    del acts
    # a failure PyTorch got past (its retry after releasing its cache
    # succeeded), then one it raised: the raised one leads
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    cached = sim.alloc(512 * MiB, "temporaries")
    sim.free(cached)
    synth.Sim.oom(sim, 1 * GiB, api="cuMemAlloc_v2")
    sim.holes = [h for h in sim.holes if h[0] != cached]
    sim.release_segment(cached)  # its cache, released to retry
    sim.alloc(1 * GiB, "activations")
    sim.oom(3 * GiB)
    sim.write(os.path.join(TMP, "hook_two.json.gz"))
    doc, _ = analyze_json("hook_two.json.gz")
    oo = dev(doc)["ooms"]
    eq([(x["raised"], x["recovered"], x["request"]) for x in oo], [(True, False, 3 * GiB), (False, True, GiB)],
       "the raised failure first, then the one PyTorch got past")
    eq(oo[1]["released_after"], 512 * MiB, "the cached segment PyTorch released to retry")
    check("fragmentation" in [a["kind"] for a in oo[1]["advice"]], "its advice: %r" % oo[1]["advice"])
    rc, out, _ = run("hook_two.json.gz")
    check("2 failed allocations: 1 fatal (the program did not get past it), 1 retried by the allocator, "
          "which got the memory" in out and
          out.index("Tried to allocate 3.00 GiB") < out.index("got past inside a library: 1 failed allocation "
                                                             "(1 retried by the allocator") and
          "cuMemAlloc_v2 of 1.00 GiB failed" not in out,
          "text: the raised one first, in full; the one PyTorch got past summarised after it")
    # nine failures the allocator got past, then the one raised: the list keeps
    # the raised one (and its live set), the oldest recovered one is left out,
    # counted
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    for i in range(9):
        sim.holes = []  # a segment of its own, to release whole
        cached = sim.alloc(64 * MiB, "temporaries")
        sim.free(cached)
        synth.Sim.oom(sim, 1 * GiB + i * MiB, api="cuMemAlloc_v2")
        sim.holes = [h for h in sim.holes if h[0] != cached]
        sim.release_segment(cached)
        sim.free(sim.alloc(1 * GiB + i * MiB, "activations"))
    sim.push("fwd:<Net>")
    held = sim.alloc(2 * GiB, "activations")
    sim.oom(7 * GiB)
    sim.write(os.path.join(TMP, "hook_ten.json.gz"), cut="flush")
    doc, _ = analyze_json("hook_ten.json.gz")
    d = dev(doc)
    eq((d["oom_count"], len(d["ooms"])), (10, 8), "ten incidents, eight listed")
    eq((d["ooms"][0]["raised"], d["ooms"][0]["detailed"], d["ooms"][0]["layer"], d["ooms"][0]["phase"]),
       (True, True, "<Net>", "forward"), "the raised one leads, with its live set, where it was made")
    eq(d["ooms_left_out"], {"count": 2, "recovered": 2, "raised": 0, "released": 128 * MiB, "retries": 0},
       "the two oldest recovered ones left out, counted")
    eq([x["request"] for x in d["ooms"][1:]], [GiB + i * MiB for i in range(2, 9)], "the rest in time order")
    rc, out, _ = run("hook_ten.json.gz")
    check("10 failed allocations: 1 fatal (the program did not get past it), 9 retried by the allocator, "
          "which got the memory" in out and
          "got past inside a library: 9 failed allocations (9 retried by the allocator after releasing "
          "576 MiB of cached memory)" in out and out.count("#") == 1,
          "text: one detailed, nine summarised: %s" % out[out.find("Out of memory"):][:600])
    del held


def test_oom_outcomes():
    """Each failed allocation says whether the program got past it: the one
    that stopped it is fatal; failures caught inside a library (cuDNN's
    workspace trials) and the allocator's successful retries are one line,
    counted; the counts add up in the text and the JSON."""
    sim = synth.conv_doubling(trials=6)
    sim.write(os.path.join(TMP, "conv_trials.json.gz"), cut="flush")
    doc, _ = analyze_json("conv_trials.json.gz")
    d = dev(doc)
    n = d["oom_outcomes"]
    eq(n, {"fatal": 1, "later_steps": 0, "caught": 18, "retried": 1}, "by outcome: 6 trials in each of 3 steps, "
       "one retry, the fatal one")
    eq(sum(n.values()), d["oom_count"], "they add up to oom_count")
    eq((d["ooms"][0]["fatal"], d["ooms"][0]["outcome"], d["ooms"][0]["request"], d["ooms"][0]["phase"]),
       (True, "fatal", 16 * GiB, "backward"), "the fatal one leads")
    eq([o["fatal"] for o in d["ooms"][1:]], [False] * 7, "the others listed are not fatal")
    check(all(o["outcome"] in ("caught", "retried") and o["past_after"] > 0 for o in d["ooms"][1:]),
          "each got past, and when: %r" % [(o["outcome"], o["past_after"]) for o in d["ooms"][1:]])
    gp_ = d["ooms_got_past"]
    eq((gp_["count"], gp_["bytes"]), (19, sum(sim.rnd(40 * GiB + i * GiB) for i in range(6)) * 3 + 6 * GiB),
       "got past inside a library: how many, the bytes they asked for")
    check(gp_["seconds"] > 0, "and their cost in time: %r" % gp_)
    rc, out, _ = run("conv_trials.json.gz")
    text = out[out.find("Out of memory"):]
    check("Out of memory: 20 failed allocations: 1 fatal (the program did not get past it), 18 caught inside a "
          "library, which went on, 1 retried by the allocator, which got the memory" in text,
          "text: one set of counts: %s" % text[:400])
    eq(text.count("  #"), 1, "one card: the fatal one")
    check("got past inside a library: 19 failed allocations (18 caught there, the work went on; 1 retried by "
          "the allocator" in text, "text: the others in one line: %s" % text[-600:])
    # the program caught the raised error and completed later steps: not fatal
    synth.conv_doubling(trials=1, fatal=False).write(os.path.join(TMP, "conv_past.json.gz"), cut="flush")
    d = dev(analyze_json("conv_past.json.gz")[0])
    eq(d["oom_outcomes"], {"fatal": 0, "later_steps": 1, "caught": 3, "retried": 1}, "got past by the program")
    eq((d["ooms"][0]["outcome"], d["ooms"][0]["fatal"]), ("later_steps", False), "it leads, not fatal")
    # no step marks: what the program caught is not known to be got past
    synth.conv_doubling(trials=1, steps=False).write(os.path.join(TMP, "conv_nosteps.json.gz"), cut="flush")
    d = dev(analyze_json("conv_nosteps.json.gz")[0])
    eq(d["oom_outcomes"], {"fatal": 1, "later_steps": 0, "caught": 3, "retried": 1}, "without steps")
    # the bundled sample of an MLP's batch search (H100): two cudaMallocs
    # the allocator retried after releasing its cache, then the one PyTorch
    # raised in step 10's forward
    doc, _ = analyze_json(os.path.join(ROOT, "samples", "traces", "batch_doubling.h100.json.gz"))
    d = dev(doc)
    eq(d["oom_outcomes"], {"fatal": 1, "later_steps": 0, "caught": 0, "retried": 2}, "batch_doubling's outcomes")
    eq((d["ooms"][0]["fatal"], d["ooms"][0]["step"], d["ooms"][0]["layer"]), (True, 10, "<MLP>.blocks.6.act"),
       "batch_doubling: the fatal request")
    eq((d["ooms_got_past"]["count"], d["ooms_got_past"]["bytes"]), (2, 5100273664 + 10200547328),
       "batch_doubling: the two got past, their requests")
    # PyTorch's cudaMalloc fails, it releases 512 MiB of cache, then raises:
    # the failure's reserved, free, device total and outside the trace are
    # those of when it gave up, one value each in the JSON and the text
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    sim.holes = []
    cached = sim.alloc(512 * MiB, "temporaries")
    sim.free(cached)
    held = sim.alloc(2 * GiB, "activations")
    free0 = sim.total - sim.reserved - 512 * MiB
    synth.Sim.oom(sim, 6 * GiB, api="cuMemAlloc_v2", free=free0)
    sim.holes = [h for h in sim.holes if h[0] != cached]
    sim.release_segment(cached)
    sim.host_event(synth.EV.TORCH_OOM.name, {synth.F.BYTES: 6 * GiB, synth.F.REQUESTED: 6 * GiB,
                                             synth.F.DEVICE: 0, synth.F.FREE: free0 + 512 * MiB,
                                             synth.F.ALLOCATED: sim.fw, synth.F.RESERVED: sim.reserved,
                                             synth.F.STREAM: "0x0"}, tid=synth.MAIN, scope="p")
    sim.write(os.path.join(TMP, "oom_released.json.gz"), cut="flush")
    o = dev(analyze_json("oom_released.json.gz")[0])["ooms"][0]
    eq((o["reserved"], o["free"]), (o["pytorch"]["reserved"], o["pytorch"]["free"]),
       "reserved and free: PyTorch's when it gave up")
    eq(o["device_total"], o["pytorch"]["reserved"] + o["other"], "this process's memory then")
    eq(o["outside_trace"], o["total"] - o["free"] - o["device_total"] - o["device_static"],
       "outside the trace, of the same moment")
    rc, out, _ = run("oom_released.json.gz")
    sz = lambda v: "%.2f GiB" % (v / GiB) if v < 10 * GiB else "%.1f GiB" % (v / GiB)
    check("this process held %s" % sz(o["device_total"]) in out and "and %s reserved" % sz(o["reserved"]) in out,
          "text: the same values: %s" % out[out.find("#1"):][:400])
    del held
    # ranks: one whose cuDNN trials failed from step 1 and that died in step
    # 3, one that died in step 2: the second ran out first
    rd = os.path.join(TMP, "oom_trial_ranks")
    os.makedirs(rd, exist_ok=True)
    for rank in (0, 1):
        sim = synth.conv_doubling(trials=2) if rank == 0 else synth.Sim(total=8 * GiB)
        sim.pid = 7300 + rank
        sim.rank, sim.world_size, sim.local_rank, sim.local_world_size = rank, 2, rank, 2
        if rank == 1:
            synth.train(sim, 4, oom_at=2, oom_request=3584 * MiB, act=(4 * GiB, 48 * MiB))
        sim.write(os.path.join(rd, "rank%d.%d.json.gz" % (rank, sim.pid)))
    k = analyze_json(rd)[0]["ranks"]
    eq([r["first_oom_step"] for r in k["by_rank"]], [3, 2], "each rank ran out at its fatal failure's step")
    eq((k["first_out_by"], k["first_out_rank"]), ("oom", 1), "the rank that died first, not the one whose "
       "library got past failures earlier")


def test_hook_expandable():
    """Expandable segments: pages mapped and unmapped in ranges that need not
    match; reserved is their sum."""
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    for addr, n, release in ((0x1000, 20 * MiB, False), (0x1000 + 20 * MiB, 40 * MiB, False),
                             (0x1000 + 10 * MiB, 30 * MiB, True)):
        sim.host_event(EV.TORCH_SEGMENT_FREE.name if release else EV.TORCH_SEGMENT_ALLOC.name,
                       {F.ADDR: "0x%x" % addr, F.BYTES: n, F.DEVICE: 0, F.STREAM: "0x0", F.MAPPED: True},
                       pid=sim.gpu_pid)
    sim.write(os.path.join(TMP, "hook_exp.json.gz"))
    doc, _ = analyze_json("hook_exp.json.gz")
    r = dev(doc)["summary"]["reserved"]
    eq((r["peak"], r["end"]), (60 * MiB, 30 * MiB), "mapped pages: peak and end")


def test_hook_notes():
    """What the hook did not see is said: blocks made before it attached,
    sizes it guessed; a hook the hooks could not attach."""
    sim = synth.HookSim(total=8 * GiB, before=(3 * MiB, 20 * MiB))
    sim.torch_info()
    sim.alloc(MiB, "parameters")
    sim.host_event(EV.TORCH_ALLOC.name, {F.ADDR: "0x9000", F.BYTES: 1024, F.REQUESTED: 1000, F.DEVICE: 0,
                                         F.STREAM: "0x0", F.GUESSED: True}, tid=synth.MAIN)
    sim.write(os.path.join(TMP, "hook_notes.json.gz"))
    doc, _ = analyze_json("hook_notes.json.gz")
    t = doc["traces"][0]
    eq((t["allocator_hook"]["allocated_before"], t["allocator_hook"]["reserved_before"],
        t["allocator_hook"]["sizes_guessed"]), (3 * MiB, 20 * MiB, 1), "before, guessed")
    check(any("before gpuprof's hook" in n for n in t["notes"]) and
          any("could not be read" in n for n in t["notes"]), "notes: %r" % t["notes"])
    sim = synth.Sim(mode="native", total=8 * GiB)
    sim.mark("gpuprof:torch " + json.dumps({"torch": "2.11.0", "mode": "native", "backend": "native",
                                            "tracker": "could not be built (no C++ compiler)"}))
    sim.alloc(20 * MiB, "parameters")
    sim.write(os.path.join(TMP, "hook_off.json.gz"))
    doc, _ = analyze_json("hook_off.json.gz")
    t = doc["traces"][0]
    eq((t["allocator_hook"]["attached"], t["allocator_hook"]["why"]),
       (False, "could not be built (no C++ compiler)"), "not attached, and why")
    check(any("was not attached (could not be built" in n for n in t["notes"]), "note: %r" % t["notes"])


def test_hook_bad():
    """The hook's events are checked like the rest: one line, exit 2."""
    cases = {
        "no requested": (EV.TORCH_ALLOC.name, {F.ADDR: "0x9000", F.BYTES: 1024, F.DEVICE: 0, F.STREAM: "0x0"},
                         "requested"),
        "bad addr": (EV.TORCH_FREE.name, {F.ADDR: 12, F.REQUESTED: 1, F.DEVICE: 0, F.STREAM: "0x0"}, "addr"),
        "bad frames": (EV.TORCH_STACK.name, {F.STACK: 1, F.FRAMES: [["a.py", "x", "f"]]}, "frame"),
        "frames not array": (EV.TORCH_STACK.name, {F.STACK: 1, F.FRAMES: "a.py:1"}, "frames"),
        "stack 0": (EV.TORCH_STACK.name, {F.STACK: 0, F.FRAMES: []}, "stack id"),
        "mapped": (EV.TORCH_SEGMENT_ALLOC.name, {F.ADDR: "0x9000", F.BYTES: 1, F.DEVICE: 0, F.STREAM: "0x0",
                                                 F.MAPPED: 1}, "mapped"),
        "oom no reserved": (EV.TORCH_OOM.name, {F.BYTES: 1, F.REQUESTED: 1, F.DEVICE: 0, F.FREE: 0,
                                                F.ALLOCATED: 0, F.STREAM: "0x0"}, "reserved"),
    }
    for what, (name, args, word) in cases.items():
        sim = synth.HookSim(total=8 * GiB)
        sim.host_event(name, args, tid=synth.MAIN)
        path = "hook_bad.%s.json.gz" % what.replace(" ", "_")
        sim.write(os.path.join(TMP, path))
        rc, out, err = run(path)
        eq(rc, 2, "%s: exit status" % what)
        check(len(err.strip().splitlines()) == 1 and word in err, "%s: one line naming it: %r" % (what, err))
    sim = synth.HookSim(stacks=True, total=8 * GiB)
    for _ in range(2):
        sim.host_event(EV.TORCH_STACK.name, {F.STACK: 1, F.FRAMES: [["a.py", 1, "f"]]}, scope="g")
    sim.write(os.path.join(TMP, "hook_bad.twice.json.gz"))
    rc, _, err = run("hook_bad.twice.json.gz")
    check(rc == 2 and "given twice" in err, "a stack id given twice: %r" % err)


sys.path.insert(0, os.path.join(ROOT, "profiler", "python"))
import gpuprof_history  # noqa: E402

# PyTorch's time_us is Unix time; the trace's clock here is 7 s off it, so
# the analyzer must place the points by the marks' unix_ns, not take them as is
UNIX_OFF_US = 7_000_000


class TorchHistory:
    """PyTorch's allocator as its history records it, beside a native Sim:
    entries as torch.cuda.memory._snapshot() gives them, and what the
    analyzer should find in them."""

    def __init__(self, sim):
        self.sim, self.entries = sim, []
        self.alloc = self.res = 0
        self.peak = self.peak_t = 0
        self.worst = None  # (gap, t, step, phase)
        self.at_peak, self.peak_res = None, 0  # the same when reserved first peaked

    def _add(self, action, size):
        s = self.sim
        s.tick(1)
        self.entries.append({"action": action, "size": size, "addr": 0, "stream": 0,
                             "time_us": (s.ts_base // 1000) + int(s.t) + UNIX_OFF_US})
        self.alloc += {"alloc": size, "free_requested": -size}.get(action, 0)
        self.res += {"segment_alloc": size, "segment_free": -size}.get(action, 0)
        if action == "segment_alloc":
            return  # shown with the allocation that follows it
        if self.alloc > self.peak:
            self.peak, self.peak_t = self.alloc, s.t
        gap = self.res - self.alloc
        if gap > 0 and (not self.worst or gap > self.worst[0]):
            self.worst = (gap, s.t, s.step + 1, s.phase(synth.MAIN))
        if self.res > self.peak_res:
            self.peak_res = self.res
            self.at_peak = (gap, s.t, s.step + 1, s.phase(synth.MAIN), self.res)

    def segment(self, size, cat):
        self.sim.tick(1)
        addr = self.sim.alloc(size, cat)
        self._add("segment_alloc", size)
        return addr

    def tensor(self, size):
        self._add("alloc", size)

    def free(self, size):
        self._add("free_requested", size)
        self._add("free_completed", size)  # changes nothing

    def write(self, entries=None, wrapped=False, mark_bytes=None):
        """The marks, as the hooks write them at exit."""
        saved = gpuprof_history.MARK_BYTES
        if mark_bytes:
            gpuprof_history.MARK_BYTES = mark_bytes
        try:
            texts, problem = gpuprof_history.marks(0, entries or self.entries, (self.alloc, self.res),
                                                   wrapped)
        finally:
            gpuprof_history.MARK_BYTES = saved
        check(problem is None, "the history adds up (%s)" % problem)
        for t in texts:
            s = self.sim
            unix_ns = s.ts_base + int((s.t + 1) * 1000) + UNIX_OFF_US * 1000  # mark() ticks 1 us
            s.mark(gpuprof_history.finish(t, unix_ns))
        return texts


def history_story(mark_bytes=None, wrapped_from=None):
    """A native run whose worst fragmentation lies between two of the hooks'
    samples, in step 2's backward, and whose allocated peak is in step 1's
    forward, seen only by the history."""
    sim = synth.Sim(mode="native", total=8 * GiB)
    h = TorchHistory(sim)
    sim.torch_info(history=True)
    h.segment(100 * MiB, "parameters")
    h.tensor(60 * MiB)
    for step in (1, 2):
        sim.push("fwd:<Net>")
        if step == 1:
            h.segment(200 * MiB, "activations")
        h.tensor(150 * MiB)
        if step == 2:
            h.segment(50 * MiB, "activations")
            h.tensor(50 * MiB)
        for _ in range(40):  # many small ones: a long mark
            h.tensor(512 * 1024)
            h.free(512 * 1024)
        sim.pop()
        sim.push("phase:backward")
        h.free(150 * MiB)
        if step == 2:
            h.free(50 * MiB)  # the worst: 290 MiB reserved and unused
        h.tensor(100 * MiB)
        sim.pop()
        h.free(100 * MiB)
        sim.mark("step:%d" % step)
        sim.mark('gpuprof:torch.memory {"allocated": %d, "reserved": %d}' % (h.alloc, h.res))
    # a sample the history overrides (the analyzer must not mix the two)
    sim.mark('gpuprof:torch.memory {"allocated": %d, "reserved": %d}' % (h.alloc + 5 * MiB, h.res))
    sim.name_segments()
    entries = h.entries[wrapped_from:] if wrapped_from else None
    texts = h.write(entries, wrapped=bool(wrapped_from), mark_bytes=mark_bytes)
    return sim, h, texts


def test_history():
    """--torch-history: PyTorch's allocator history placed on the trace's
    clock and fed in time order: the allocated peak and the worst gap are
    exact, with their step and phase; samples after it are not used."""
    for mark_bytes in (None, 300):
        sim, h, texts = history_story(mark_bytes)
        name = "history_%s.json.gz" % (mark_bytes or "one")
        check(len(texts) == 1 if mark_bytes is None else len(texts) > 5,
              "%s: %d marks" % (name, len(texts)))
        check(mark_bytes or len(texts[0]) > 1024, "a mark longer than names may be")
        sim.write(os.path.join(TMP, name))
        doc, _ = analyze_json(name)
        d = dev(doc)
        s = d["summary"]
        eq((s["allocated"]["known"], s["allocated"]["source"]), (True, "torch history"),
           "%s: allocated from the history" % name)
        eq(s["allocated"]["peak"], h.peak, "%s: allocated peak, between two samples" % name)
        eq(s["allocated"]["peak_t"], round(h.peak_t / 1e6, 6), "%s: when" % name)
        eq(s["allocated"]["end"], h.alloc, "%s: allocated at the end, not the last sample" % name)
        fr = s["fragmentation"]
        eq(fr["source"], "torch history", "%s: fragmentation from the history" % name)
        w = fr["worst"]
        eq((w["gap"], w["t"], w["step"], w["phase"]),
           (h.worst[0], round(h.worst[1] / 1e6, 6), h.worst[2], h.worst[3]),
           "%s: worst gap, when, step and phase" % name)
        check(h.worst[0] == 290 * MiB and h.worst[3] == "backward", "the story has its worst in backward")
        pk = fr["at_peak"]
        eq((pk["gap"], pk["reserved"], pk["t"], pk["step"], pk["phase"]),
           (h.at_peak[0], h.at_peak[4], round(h.at_peak[1] / 1e6, 6), h.at_peak[2], h.at_peak[3]),
           "%s: the gap when reserved first peaked, when, step and phase" % name)
        check(h.at_peak[0] == 90 * MiB and h.at_peak[2] == 2 and h.at_peak[3] == "forward",
              "the story's reserved peaks in step 2's forward with 90 MiB unused")
        th = doc["traces"][0]["torch_history"]
        eq((th["complete"], th["marks"]), (True, len(texts)), "%s: torch_history" % name)
        eq(doc["traces"][0]["notes"], [], "%s: no notes" % name)
        rc, out, _ = run(name)
        check("allocated (PyTorch history)" in out and "cache (reserved, not allocated): " in out,
              "%s: the text says where allocated comes from" % name)
        check("cache (reserved, not allocated): 90.0 MiB of 350 MiB when reserved peaked (26%), at " in out,
              "%s: the text says the gap at the reserved peak" % name)

    # a ring that dropped its oldest entries: anchored at the end, still exact
    sim, h, texts = history_story(wrapped_from=20)
    sim.write(os.path.join(TMP, "history_wrapped.json.gz"))
    doc, _ = analyze_json("history_wrapped.json.gz")
    s = dev(doc)["summary"]
    eq(s["allocated"]["peak"], h.peak, "wrapped: the peak is after the dropped entries")
    eq(s["fragmentation"]["worst"]["gap"], h.worst[0], "wrapped: worst gap")
    eq(doc["traces"][0]["torch_history"]["complete"], False, "wrapped: not complete")
    check(any("begins at" in n for n in doc["traces"][0]["notes"]), "wrapped: a note says so")

    # the peak in a sample before a history that begins late: its time is the sample's
    sim = synth.Sim(mode="native", total=8 * GiB)
    h = TorchHistory(sim)
    sim.torch_info(history=True)
    h.segment(100 * MiB, "parameters")
    h.tensor(90 * MiB)
    sim.mark('gpuprof:torch.memory {"allocated": %d, "reserved": %d}' % (h.alloc, h.res))
    sample_t = sim.t
    h.free(90 * MiB)
    later = len(h.entries)
    h.tensor(70 * MiB)
    h.free(70 * MiB)
    sim.name_segments()
    h.write(h.entries[later:], wrapped=True)
    sim.write(os.path.join(TMP, "history_late.json.gz"))
    doc, _ = analyze_json("history_late.json.gz")
    s = dev(doc)["summary"]
    eq((s["allocated"]["peak"], s["allocated"]["peak_t"]), (90 * MiB, round(sample_t / 1e6, 6)),
       "late history: the sampled peak before it, at the sample's time")

    # asked, not written (the program died before exit)
    sim = synth.Sim(mode="native", total=8 * GiB)
    sim.torch_info(history=True)
    sim.alloc(20 * MiB, "parameters")
    sim.mark('gpuprof:torch.memory {"allocated": %d, "reserved": %d}' % (10 * MiB, 20 * MiB))
    sim.name_segments()
    sim.write(os.path.join(TMP, "history_missing.json.gz"))
    doc, _ = analyze_json("history_missing.json.gz")
    eq(dev(doc)["summary"]["allocated"]["source"], "torch marks", "missing history: samples")
    rc, out, _ = run("history_missing.json.gz")
    check("cache (reserved, not allocated; sampled): 10.0 MiB of 20.0 MiB when reserved peaked (50%)" in out
          and "at most 10.0 MiB at " in out,
          "missing history: the text says both gaps are sampled")
    check(any("--torch-history was asked" in n for n in doc["traces"][0]["notes"]),
          "missing history: a note says so")


def bad_history_marks():
    """Traces whose history marks do not hold together: (name, path)."""
    def one(name, texts):
        sim = synth.Sim(mode="native", total=8 * GiB)
        sim.torch_info(history=True)
        sim.alloc(20 * MiB, "parameters")
        sim.tick(1000)
        for t in texts:
            sim.mark("gpuprof:torch.history " + t)
        path = os.path.join(TMP, "bad_history_%s.json.gz" % name)
        sim.write(path)
        return name, path

    now_us = (1_700_000_000_000_000_000 // 1000) + 1000
    ok = ('{"device": 0, "part": %d, "last": %s, "complete": true, "t0_us": %d, '
          '"p": [0, 10, 20, 5, 0, 20], "unix_ns": %d}')
    good = ok % (0, "false", now_us, now_us * 1000 + 2_000_000)
    yield one("not_json", ["{bad"])
    yield one("not_whole_points", [good.replace("0, 10, 20, 5, 0, 20", "0, 10, 20, 5")])
    yield one("negative", [good.replace("0, 10, 20, 5, 0, 20", "0, -10, 20")])
    yield one("float", [good.replace("0, 10, 20, 5, 0, 20", "0, 1.5, 20")])
    yield one("absurd_bytes", [good.replace("0, 10, 20, 5, 0, 20", "0, %d, 20" % (1 << 51))])
    yield one("device_absurd", [good.replace('"device": 0', '"device": 64')])
    yield one("no_unix_ns", [good.replace(', "unix_ns": %d' % (now_us * 1000 + 2_000_000), "")])
    yield one("part_again", [good, good])
    yield one("after_last", [ok % (0, "true", now_us, now_us * 1000 + 2_000_000),
                             ok % (1, "true", now_us + 10, now_us * 1000 + 2_000_000)])
    yield one("back_in_time", [good, ok % (1, "true", now_us - 100, now_us * 1000 + 2_000_000)])
    yield one("after_the_mark", [ok % (0, "true", now_us + 10_000_000, now_us * 1000)])


def run_advice(d, kind):
    """The device's advice of that kind (about the run, not a failure)."""
    return [a for a in d.get("advice") or [] if a.get("kind") == kind]


def test_advice_no_grad():
    """Inference without torch.no_grad(): the activations autograd kept for a
    backward that never came, advised with their bytes; none under no_grad
    and none in training, where a backward follows each forward."""
    for name, kw in (("inf_grad", {}), ("inf_nograd", {"no_grad": True}), ("inf_train", {"backward": True}),
                     ("inf_grad_tensor", {"tensor": True})):
        sim = synth.Sim(total=16 * GiB) if kw.pop("tensor", False) else synth.HookSim(total=16 * GiB)
        kept = synth.inference(sim, **kw)
        sim.write(os.path.join(TMP, name + ".json.gz"))
        doc, _ = analyze_json(name + ".json.gz")
        d = dev(doc)
        adv = run_advice(d, "no_grad")
        if not kept:
            eq(adv, [], "%s: no no_grad advice" % name)
            continue
        if check(len(adv) == 1, "%s: one no_grad advice: %r" % (name, d.get("advice"))):
            eq((adv[0]["bytes"], adv[0]["of"]), (kept, d["peak"]["bytes"]), "%s: its bytes, of the peak" % name)
            check("torch.no_grad()" in adv[0]["text"] and "torch.inference_mode()" in adv[0]["text"],
                  "%s: it names the fix: %s" % (name, adv[0]["text"]))
        rc, out, _ = run(name + ".json.gz")
        check("\n  advice: 320 MiB of the peak's 536 MiB are 5 activations " in out, "%s: the text says it" % name)
    # a decode loop under torch.inference_mode(): each forward adds keys and
    # values to a cache kept across forwards, freed at the end: not advised
    sim = synth.HookSim(total=16 * GiB)
    sim.torch_info()
    sim.alloc(16 * MiB, "parameters")
    cache = []
    for step in range(1, 9):
        sim.tick(1000)
        sim.push("fwd:<LM>")
        for i in range(4):
            sim.push("fwd:blocks.%d" % i)
            cache.append(sim.alloc(32 * MiB, "activations"))
            t = sim.alloc(8 * MiB, "activations")
            sim.free(t)
            sim.pop()
        sim.pop()
        sim.mark("step:%d" % step)
    for a in cache:
        sim.free(a)
    sim.write(os.path.join(TMP, "inf_kv.json.gz"))
    doc, _ = analyze_json("inf_kv.json.gz")
    eq(run_advice(dev(doc), "no_grad"), [], "a cache kept across forwards: no no_grad advice")


def test_advice_growth():
    """Each step's peak higher than the last while nothing stays between
    steps (a batch that doubles): advice on growth that is not a leak, with
    the step that would not fit; none for a leak, whose growth is what it
    leaves (the H100 trace of outputs_list_leak gpu)."""
    sim = synth.HookSim(total=8 * GiB)
    sim.torch_info()
    sim.alloc(16 * MiB, "parameters")
    for step in range(1, 7):
        b = 32 * MiB << (step - 1)
        sim.tick(5000)
        x = sim.alloc(b, "inputs")
        sim.push("fwd:<Net>")
        sim.push("fwd:fc")
        a = sim.alloc(4 * b, "activations")
        sim.pop()
        sim.pop()
        sim.push("phase:backward")
        sim.bwd_start("fc")
        sim.free(a, tid=synth.AUTOGRAD)
        sim.bwd_end(synth.AUTOGRAD)
        sim.pop()
        sim.free(x)
        sim.mark("step:%d" % step)
    sim.write(os.path.join(TMP, "grow.json.gz"))
    doc, _ = analyze_json("grow.json.gz")
    d = dev(doc)
    g = d["growth"]
    check(g is not None and d["leak"]["verdict"] != "leak", "growth, no leak: %r %r" % (g, d["leak"]["verdict"]))
    adv = run_advice(d, "growth")
    if check(g and len(adv) == 1, "one growth advice: %r" % d.get("advice")):
        eq((adv[0]["bytes"], adv[0]["of"]), (int(g["bytes_per_step"]), g["last_peak"]), "its bytes, of the last peak")
        check("not a leak" in adv[0]["text"] and "would not fit the device (8.00 GiB)" in adv[0]["text"],
              "what it says: %s" % adv[0]["text"])
    doc, _ = analyze_json(os.path.join(ROOT, "samples", "traces", "outputs_list_leak.gpu.h100.json.gz"))
    d = dev(doc)
    check(d["growth"] is not None and d["leak"]["verdict"] == "leak", "the leak's peaks grow too")
    eq(run_advice(d, "growth"), [], "a leak: no growth advice")


def fragmenting(sim, rounds=12, base=256 * MiB, grow=8 * MiB, small=12 * MiB):
    """fragmentation.py's story: each round a temporary larger than the one
    before, a small result kept, the temporary freed: no freed block fits
    the next one, so each round reserves a segment while the cache holds
    more than its bytes."""
    for i in range(rounds):
        big = sim.alloc(base + i * grow, "temporaries")
        sim.alloc(small, "activations")
        sim.free(big)
        sim.tick(100)


def test_cache_fragmentation():
    """Reserved less allocated is the cache; fragmentation is only the
    segments PyTorch reserved while the cache held enough free bytes for
    their block. expandable_segments is advised with what it would save at
    most, not where it is on; summary.fragmentation stays, the same as
    summary.cache (its former name)."""
    sim = synth.HookSim(total=16 * GiB)
    sim.torch_info()
    fragmenting(sim)
    sim.write(os.path.join(TMP, "frag_hook.json.gz"))
    doc, _ = analyze_json("frag_hook.json.gz")
    s = dev(doc)["summary"]
    cache = s.get("cache") or {}
    fr = cache.get("fragmentation") or {}
    check(len(sim.split) == 11, "the story: a segment reserved with enough cached in 11 rounds")
    eq((fr.get("known"), fr.get("segments"), fr.get("bytes")),
       (True, len(sim.split), sum(x[2] for x in sim.split)), "segments reserved while the cache held enough")
    w = max(sim.split)
    eq(((fr.get("worst") or {}).get("cached"), (fr.get("worst") or {}).get("block")), (w[0], w[1]),
       "the worst: the most cached, and the block")
    eq(s["fragmentation"], {k: v for k, v in cache.items() if k != "fragmentation"},
       "summary.fragmentation: the cache under its former name")
    save = sim.reserved_peak - (sim.peak["bytes"] + 20 * MiB - 1) // (20 * MiB) * (20 * MiB)
    adv = run_advice(dev(doc), "expandable_segments")
    if check(len(adv) == 1, "expandable_segments advised: %r" % dev(doc).get("advice")):
        eq((adv[0]["bytes"], adv[0]["of"]), (save, sim.reserved_peak), "what it would save at most, of the reserved peak")
        check("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in adv[0]["text"], adv[0]["text"])
    rc, out, _ = run("frag_hook.json.gz")
    check("  cache (reserved, not allocated): " in out and "fragmentation: worst" not in out and
          "  fragmentation: 11 segments (" in out, "the text: the cache, then fragmentation:\n" + out[:1500])
    # already on: not advised
    sim = synth.HookSim(total=16 * GiB)
    sim.torch_info(alloc_conf="expandable_segments:True")
    fragmenting(sim)
    sim.write(os.path.join(TMP, "frag_on.json.gz"))
    doc, _ = analyze_json("frag_on.json.gz")
    fr = (dev(doc)["summary"].get("cache") or {}).get("fragmentation") or {}
    eq(fr.get("expandable_segments"), True, "expandable segments on")
    eq(run_advice(dev(doc), "expandable_segments"), [], "on already: not advised")
    # a training run: its cache is not worth the setting
    sim = synth.HookSim(total=16 * GiB)
    synth.train(sim, 6, cublas=0)
    sim.write(os.path.join(TMP, "frag_train.json.gz"))
    doc, _ = analyze_json("frag_train.json.gz")
    fr = (dev(doc)["summary"].get("cache") or {}).get("fragmentation") or {}
    eq(fr.get("known"), True, "training: fragmentation known")
    eq(run_advice(dev(doc), "expandable_segments"), [], "training: not advised")
    # tensor mode: the cache, no fragmentation judged
    make("train")
    doc, _ = analyze_json("train.json.gz")
    fr = (dev(doc)["summary"].get("cache") or {}).get("fragmentation") or {}
    eq((fr.get("known"), fr.get("segments")), (False, None), "tensor mode: not known")


ADVICE_H100 = os.path.join(ROOT, "tests", "data", "single-h100")


def test_advice_h100():
    """Real traces (H100, torch 2.11, native mode) of samples/pytorch's
    inference_no_grad.py and fragmentation.py, each variant, against what
    PyTorch measured in the same runs (NAME.expect)."""
    exp = {}
    for name in ("inference_grad", "inference_nograd", "frag_default", "frag_expandable"):
        rest = open(os.path.join(ADVICE_H100, name + ".expect")).read()
        exp[name] = dict(w.split("=", 1) for w in rest.split()[1:] if "=" in w)
    d = {}
    for name in exp:
        doc, _ = analyze_json(os.path.join(ADVICE_H100, name + ".h100.json.gz"))
        d[name] = dev(doc)
    # inference: grad's peak less no_grad's is what no_grad saves; the advice
    # says at most its bytes, within an activation (256 MiB) of that
    gained = int(exp["inference_grad"]["max_allocated"]) - int(exp["inference_nograd"]["max_allocated"])
    act = int(exp["inference_grad"]["activation_bytes"])
    adv = run_advice(d["inference_grad"], "no_grad")
    if check(len(adv) == 1, "grad: no_grad advised: %r" % d["inference_grad"].get("advice")):
        check(gained <= adv[0]["bytes"] <= gained + act, "grad: %d bytes kept, no_grad saved %d" % (
            adv[0]["bytes"], gained))
    eq(run_advice(d["inference_nograd"], "no_grad"), [], "nograd: not advised")
    # fragmentation: with expandable segments the reserved peak fell by less
    # than the advice's most, and by most of it
    fell = int(exp["frag_default"]["max_reserved"]) - int(exp["frag_expandable"]["max_reserved"])
    adv = run_advice(d["frag_default"], "expandable_segments")
    if check(len(adv) == 1, "default: expandable_segments advised: %r" % d["frag_default"].get("advice")):
        check(fell <= adv[0]["bytes"] <= fell * 1.1, "default: up to %d saved, the setting saved %d" % (
            adv[0]["bytes"], fell))
        eq(adv[0]["of"], int(exp["frag_default"]["max_reserved"]), "of max_memory_reserved()")
    fr = d["frag_default"]["summary"]["cache"]["fragmentation"]
    check(fr["segments"] >= int(exp["frag_default"]["steps"]) - 2, "default: a segment each round: %r" % fr)
    fx = d["frag_expandable"]["summary"]["cache"]["fragmentation"]
    eq(fx["expandable_segments"], True, "expandable: seen on (pages mapped)")
    eq(run_advice(d["frag_expandable"], "expandable_segments"), [], "expandable: not advised again")
    for name in exp:
        ca = d[name]["summary"]["cache"]
        eq(ca["at_peak"]["reserved"], int(exp[name]["max_reserved"]), "%s: reserved peak" % name)


def test_multi():
    """Two processes on one GPU, merged on one clock; --process, --device."""
    exp = make("multi")
    doc, _ = analyze_json("multi.json.gz", "multi.5002.json.gz")
    eq([t["pid"] for t in doc["traces"]], [5001, 5002], "both processes")
    eq([t["rank"] for t in doc["traces"]], [None, 1], "rank from gpuprof.meta, null without")
    eq([(t["world_size"], t["local_rank"], t["local_world_size"], t["job_start_unix_ns"]) for t in doc["traces"]],
       [(None, None, None, None), (2, 1, 2, 1_700_000_000_000_000_000)],
       "world size, local rank and size, the job's start from gpuprof.meta, null without")
    rc, out, _ = run("multi.json.gz", "multi.5002.json.gz")
    eq(out.count("  rank 1 of 2, local rank 1 on synth\n"), 1, "text: the rank of the one process that has one")
    eq(len(doc["gpus"]), 1, "one shared GPU")
    g = doc["gpus"][0]
    eq(g["peak"], exp["together"], "peak of both together")
    eq(g["peak_t"], exp["together_t"], "when, on one clock")
    eq([x["bytes"] for x in g["by_process"]], [1 * GiB, 2 * GiB], "each process at that moment")
    doc, _ = analyze_json("--process", "5002", "multi.json.gz", "multi.5002.json.gz")
    eq([d["pid"] for d in doc["devices"]], [5002], "--process")
    rc, out, err = run("--process", "999", "multi.json.gz")
    eq(rc, 2, "--process that matches nothing")
    eq(len(err.splitlines()), 1, "one line")
    # a GPU no process used: refused as check and compare refuse it
    for fmt in ([], ["--json"]):
        rc, out, err = run(*(fmt + ["--device", "1", "multi.json.gz"]))
        eq((rc, out, err.strip()), (2, "", "gpuprof: --device 1: no memory activity on cuda:1 in the trace "
                                            "(memory activity on cuda:0)"), "--device 1: nothing on GPU 1")
    doc, _ = analyze_json("--device", "0", "multi.json.gz")
    eq([d["device"] for d in doc["devices"]], [0], "--device 0")


def manifest(job, traces, host="synth", pid=9000):
    """A launcher's manifest as viewer/run/MANIFEST.md has it."""
    return {"schema": "gpuprof.run/1", "version": "0.1.0", "job": job, "host": host, "launcher_pid": pid,
            "command": ["torchrun", "--nproc-per-node", "4", "train.py"], "start_unix_ns": 1,
            "end_unix_ns": 2, "exit_status": 0,
            "traces": [{"file": f, "pid": p, "rank": r, "world_size": 4, "complete": True}
                       for f, p, r in traces]}


def test_ranks():
    """A run directory: ranks side by side, the first to run out and why; manifests read and
    checked; collectives at each rank's peak."""
    exp = make("ranks")
    doc, err = analyze_json("ranks")
    check("has no manifest" in err and "(rank 3)" in err, "notes: no manifest, rank 3 missing: %r" % err)
    k = doc["ranks"]
    rows = k["by_rank"]
    eq([r["rank"] for r in rows], [0, 1, 2], "one row per traced rank")
    eq(k["world_size"], 4, "world size")
    eq(k["missing"], [3], "the rank that left no trace")
    for r in rows:
        e = exp["ranks"][str(r["rank"])]
        eq(r["peak"], e["peak"], "rank %d: its peak" % r["rank"])
        eq(r["reserved_peak"], e["reserved_peak"], "rank %d: reserved peak" % r["rank"])
        eq(r["other_peak"], e["other_peak"], "rank %d: outside PyTorch" % r["rank"])
        eq(r["headroom"], e["capacity"] - r["device_peak"], "rank %d: headroom" % r["rank"])
    # collectives at each rank's peak, as its device's peak says them
    for r in rows:
        e = exp["ranks"][str(r["rank"])]["collectives"]
        d = [x for x in doc["devices"] if x["pid"] == r["pid"] and x["device"] == r["device"]][0]
        c = d["peak"]["collectives"]
        if e is None:
            eq(c, None, "rank %d ran no collective: null" % r["rank"])
            continue
        eq([x["op"] for x in c["during"]], e["during"], "rank %d: outstanding at its peak" % r["rank"])
        eq((c["before"] or {}).get("op"), e["before"], "rank %d: the last before" % r["rank"])
        eq((c["after"] or {}).get("op"), e["after"], "rank %d: the next after" % r["rank"])
        eq(c["seen"], e["seen"], "rank %d: collectives seen (not PyTorch's kernel)" % r["rank"])
        for x in c["during"]:
            check(x["launch_t"] <= d["peak"]["t"] < x["end_t"], "outstanding: launched before, ends after")
            check(x["kernel"].startswith("ncclDevKernel_") and "(" not in x["kernel"], "kernel name, no args")
            check(x["tid"] == synth.COMM, "the launching thread")
    d1 = [x for x in doc["devices"] if x["pid"] == 7001][0]
    queued = [x for x in d1["peak"]["collectives"]["during"] if x["op"] == "ReduceScatter"]
    check(queued and queued[0]["start_t"] > d1["peak"]["t"] and queued[0]["stream"] == 14,
          "rank 1: the reduce-scatter launched before its peak, started after it")
    gathers = [x for x in d1["peak"]["collectives"]["during"] if x["op"] == "AllGather"]
    eq([(x["kernel"], x["call"]) for x in gathers], [("ncclDevKernel_Generic_1", "ncclAllGather")],
       "rank 1: NCCL's generic kernel named by its call's range")
    eq(queued[0]["call"], None, "a kernel launched outside any NCCL range: named by itself")
    peaks = {int(r): e["peak"] for r, e in exp["ranks"].items()}
    eq((k["min_rank"], k["max_rank"], k["median_rank"]), (0, 1, 2), "smallest, largest, median")
    eq(k["spread"], peaks[1] - peaks[0], "spread")
    eq((k["first_out_rank"], k["first_out_by"]), (1, "headroom"), "rank 1 has the least room left")
    why = k["why"]
    eq(why["compared_with_rank"], 2, "against the median rank")
    eq(why["peak_delta"], peaks[1] - peaks[2], "how much more it holds")
    c1, c2 = exp["ranks"]["1"]["categories"], exp["ranks"]["2"]["categories"]
    want = sorted(((c, c1.get(c, 0) - c2.get(c, 0)) for c in set(c1) | set(c2) if c1.get(c, 0) != c2.get(c, 0)),
                  key=lambda x: (-abs(x[1]), x[0]))
    eq([(d["name"], d["delta"]) for d in why["by_category"]], want, "categories that differ")
    l1, l2 = exp["ranks"]["1"]["lines"], exp["ranks"]["2"]["lines"]
    eq(why["by_line"][0]["name"], "train.py:41 in forward", "the line that differs most")
    eq(why["by_line"][0]["delta"], l1["train.py:41 in forward"] - l2["train.py:41 in forward"], "its difference")
    eq(why["by_layer"][0]["name"], "<Net>.fc1", "the layer that differs most")
    eq(sum(d["delta"] for d in why["by_layer"]), why["peak_delta"],
       "the layers' own bytes add up to the whole difference")
    rc, out, _ = run("ranks")
    check("runs out first: rank 1 (*), the least room left" in out, "text: the rank that runs out first")
    check("\n    <Net>.fc1 " in out, "text: the layer that differs")
    check("collectives at the peak: AllGather (stream 13, launched 0.200 ms before, running since "
          "0.150 ms before, ends 0.250 ms after); ReduceScatter (stream 14, launched 0.050 ms before, "
          "queued: starts 0.030 ms after, ends 0.130 ms after)" in out, "text: rank 1's collectives")
    check("collectives at the peak: none outstanding; the last: AllReduce (stream 13, launched 0.300 ms "
          "before, ended 0.190 ms before); the next: AllGather" in out, "text: rank 0's")
    check(re.search(r"\n +1 \* .* AllGather \+1\n", out), "text: the ranks table's collective")
    # a single rank, or none: no ranks section
    doc, _ = analyze_json(os.path.join("ranks", "rank0.7000.json.gz"))
    eq(doc["ranks"], None, "one rank: null")

    # with manifests: only the traces they list; two jobs refused
    d = os.path.join(TMP, "ranks")
    with open(os.path.join(d, "manifest.synth.9000.json"), "w") as f:
        json.dump(manifest("synth.9000.1", [("rank0.7000.json.gz", 7000, 0), ("rank1.7001.json.gz", 7001, 1)]), f)
    doc, err = analyze_json("ranks")
    eq([r["rank"] for r in doc["ranks"]["by_rank"]], [0, 1], "the manifest's traces")
    check("no manifest lists" in err and "left out" in err, "an unlisted trace is said: %r" % err)
    eq(doc["ranks"]["missing"], [2, 3], "ranks not in the run")
    with open(os.path.join(d, "manifest.synth.9001.json"), "w") as f:
        json.dump(manifest("synth.9001.1", [("rank2.7002.json.gz", 7002, 2)], pid=9001), f)
    rc, out, err = run("ranks")
    eq(rc, 2, "manifests of two jobs: refused")
    check("two runs" in err and len(err.splitlines()) == 1, "one line: %r" % err)
    bad = [
        ({"schema": "nope"}, "not a gpuprof manifest"),
        (dict(manifest("synth.9001.1", []), traces=[{"file": "../x.json.gz", "pid": 1}]), "in the directory"),
        (dict(manifest("synth.9001.1", []), traces=[{"file": "rank2.7002.json.gz", "pid": 7001, "rank": 2}]),
         "is not the trace"),
        (dict(manifest("synth.9001.1", []), exit_status="0"), "not a number"),
    ]
    for doc_, what in bad:
        with open(os.path.join(d, "manifest.synth.9001.json"), "w") as f:
            json.dump(doc_, f)
        with open(os.path.join(d, "manifest.synth.9000.json"), "w") as f:
            json.dump(manifest("synth.9001.1", []), f)
        rc, out, err = run("ranks")
        eq(rc, 2, "bad manifest (%s): exit 2" % what)
        check(what in err and len(err.strip().splitlines()) == 1, "one line saying %r: %r" % (what, err))
    with open(os.path.join(d, "manifest.synth.9001.json"), "w") as f:
        f.write("{")
    rc, out, err = run("ranks")
    eq(rc, 2, "a manifest that is no JSON: exit 2")

    # in a directory without a manifest: a file that is no gpuprof trace is
    # left out, said; a trace whose gpuprof.meta fails a check (the trace
    # library's, exporters/trace_meta.c) fails the run with analyze's line
    d = os.path.join(TMP, "badmeta")
    os.makedirs(d)
    src = os.path.join(TMP, "ranks", "rank0.7000.json.gz")
    shutil.copy(src, os.path.join(d, "rank0.7000.json.gz"))
    with gzip.open(os.path.join(d, "proc.notes.json.gz"), "wt") as f:
        f.write('{"a": 1}\n')
    doc, err = analyze_json("badmeta")
    eq(len(doc["traces"]), 1, "the one trace analyzed")
    check("proc.notes.json.gz is no gpuprof trace: left out" in err, "a stray file said: %r" % err)
    lines = gzip.open(src, "rt").read().split("\n")
    lines[1] = lines[1].replace('"version":"0.1.0","pid":7000,', '"version":"0.1.0","pid":"7000",', 1)
    with gzip.open(os.path.join(d, "rank1.7001.json.gz"), "wt") as f:
        f.write("\n".join(lines))
    for cmd in (("analyze",), ("report",), ("check", "--max-peak", "1GiB")):
        rc, out, err = gp_cmd(*cmd, "badmeta")
        eq(rc, 2, "%s: a trace with a bad gpuprof.meta: exit 2" % cmd[0])
        check('badmeta/rank1.7001.json.gz:2: gpuprof.meta event: "pid" is not a non-negative integer'
              in err, "%s: the meta's fault, where: %r" % (cmd[0], err))


DATA = os.path.join(ROOT, "tests", "data")


def pytorch_numbers(run):
    """What PyTorch measured in each rank of a recorded job (its pytorch.txt,
    the job's own lines): {rank: {max_allocated, max_reserved, ...}}."""
    out = {}
    for line in open(os.path.join(run, "pytorch.txt")):
        w = line.split()
        if len(w) > 6 and w[0] in ("rank", "RANK") and w[2] == "local":
            out[int(w[1])] = dict((k, int(v)) for k, v in (x.split("=", 1) for x in w[6:]) if v.isdigit())
    return out


def rank_checks(name, run, doc):
    """Each rank of a real job on a host of two GPUs: one GPU, its own
    (local rank), and its allocated and reserved peaks PyTorch's own."""
    want = pytorch_numbers(run)
    pid_rank = {t["pid"]: t["rank"] for t in doc["traces"] if t["rank"] is not None}
    devs = {}
    for d in doc["devices"]:
        devs.setdefault(pid_rank.get(d["pid"]), []).append(d)
    eq(sorted(r for r in devs if r is not None), sorted(pid_rank.values()), "%s: a GPU for each rank" % name)
    for r, ds in sorted(devs.items(), key=lambda x: (x[0] is None, x[0])):
        if r is None:
            continue
        eq([d["device"] for d in ds], [r], "%s rank %d: its one GPU, its own" % (name, r))
        if r in want:
            s = ds[0]["summary"]
            eq((s["allocated"]["peak"], s["reserved"]["peak"]),
               (want[r]["max_allocated"], want[r]["max_reserved"]),
               "%s rank %d: allocated and reserved peaks = PyTorch's" % (name, r))
    eq(len(doc["ranks"]["by_rank"]), len(pid_rank), "%s: a row per rank" % name)
    return devs


def test_multigpu():
    """Real traces of jobs on a host of two GPUs (H200s, torch 2.11, NCCL;
    tests/data/README.md): each rank shows its one GPU, every peak is
    PyTorch's, the ranks' story is told. ranks2-toy-h200-older was
    recorded before the recorder placed module globals by their context and
    announced only the GPUs a rank used: read right all the same."""
    # a toy job (rank r holds (r + 1) x 256 MiB), older recorder: every
    # rank attached to both GPUs, rank 1's module globals said GPU 0, NCCL's
    # unused 32 MiB pool beside PyTorch's segments
    toy = os.path.join(DATA, "ranks2-toy-h200-older")
    doc, err = analyze_json(toy)
    devs = rank_checks("toy", toy, doc)
    statics = devs[1][0]["summary"]["kinds"].get("device_static", {})
    check(statics.get("allocations", 0) > 1000, "rank 1's module globals on its GPU: %r" % statics)
    k = doc["ranks"]
    eq((k["min_rank"], k["max_rank"], k["first_out_rank"], k["spread"]), (0, 1, 1, 1077936128 - 541065216),
       "toy: the spread between the real rows, rank 1 first out")
    eq((k["why"] or {}).get("compared_with_rank"), 0, "toy: rank 1 against rank 0")
    diffs = [(c["name"], c["delta"]) for c in k["why"]["by_category"]]
    eq([d for _, d in diffs], [512 * MiB], "toy: what rank 1 holds more, named")
    check(diffs and diffs[0][0] != "parameters", "toy: a script with no model has no parameters (%r)" % diffs)
    rc, out, _ = run(toy)
    check("Ranks: 2 traced of world size 2" in out, "toy text: two ranks of two")
    pids = {r: p for p, r in ((t["pid"], t["rank"]) for t in doc["traces"]) if r is not None}
    check(not re.search(r"GPU 1 of process %d\b" % pids[0], out) and
          not re.search(r"GPU 0 of process %d\b" % pids[1], out), "toy text: no GPU a rank did not use")
    rc, out, err = gp_cmd("check", toy, "--max-peak", "70GiB")
    check(rc == 0 and " 0 B" not in out, "check on the toy's run directory: exit %d, %r %r" % (rc, out, err))
    rc, out, err = gp_cmd("compare", "--metric", "peak-reserved", toy, toy)
    check(rc == 0 and "of 4 GPUs" not in out, "compare --metric peak-reserved: exit %d, %r %r" % (rc, out, err))

    # ranks of uneven batches (4 and 6; GPT-2 with 2 blocks, DDP)
    uneven = os.path.join(DATA, "ranks2-uneven-h200")
    doc, err = analyze_json(uneven)
    rank_checks("uneven", uneven, doc)
    k = doc["ranks"]
    eq((k["first_out_rank"], k["first_out_by"], k["why"]["compared_with_rank"]), (1, "headroom", 0),
       "uneven: rank 1 (the larger batch) first out, against rank 0")
    top = max(k["why"]["by_category"], key=lambda c: c["delta"])
    check(top["name"] == "activations" and top["delta"] > 0, "uneven: rank 1's extra activations named: %r" % top)

    # rank 1's batch doubles every step until PyTorch raises; torchrun then
    # ends rank 0 with SIGTERM
    grow = os.path.join(DATA, "ranks2-grow-h200")
    doc, err = analyze_json(grow)
    rank_checks("grow", grow, doc)
    k = doc["ranks"]
    rows = {r["rank"]: r for r in k["by_rank"]}
    eq((k["first_out_rank"], k["first_out_by"], rows[1]["first_oom_step"]), (1, "oom", 8),
       "grow: rank 1 first out, by its OOM at step 8")
    eq((rows[0].get("end_signal"), rows[0].get("stopped_after_first"), rows[1].get("stopped_after_first")),
       (15, True, False),
       "grow: rank 0 ended by SIGTERM after rank 1 ran out")
    d1 = [d for d in doc["devices"] if d["pid"] == rows[1]["pid"]][0]
    g = d1.get("growth") or {}
    peaks = {int(w[4]): int(w[8].split("=")[1]) for w in (l.split() for l in open(os.path.join(grow, "pytorch.txt")))
             if w[0] == "STEP" and w[2] == "1"}
    eq((g.get("since_step"), g.get("last_step"), g.get("last_peak")), (1, 7, peaks[7]),
       "grow: rank 1's growth from step 1 to 7, its last step's peak PyTorch's")
    check(1.8 < (g.get("factor_per_step") or 0) < 2.1 and (g.get("next_peak") or 0) > d1["capacity"],
          "grow: about x2 a step, the next step beyond the device: %r" % g)
    d0 = [d for d in doc["devices"] if d["pid"] == rows[0]["pid"]][0]
    eq(d0.get("growth", "absent"), None, "grow: rank 0's steps do not grow")
    # two cudaMallocs the allocator got past (a new segment of the size that
    # failed, after releasing its cache), then the request PyTorch raised
    eq((d1["oom_outcomes"], d0["oom_outcomes"]), ({"fatal": 1, "later_steps": 0, "caught": 0, "retried": 2},
                                                  {"fatal": 0, "later_steps": 0, "caught": 0, "retried": 0}),
       "grow: rank 1 died of one failure, got past two")
    eq([(o["step"], o["outcome"]) for o in d1["ooms"]], [(8, "fatal"), (7, "retried"), (8, "retried")],
       "grow: the fatal one first")
    rc, out, _ = run(grow)
    first = out.find("GPU 1 of process %d" % rows[1]["pid"])
    check(0 <= first < out.find("GPU 0 of process %d" % rows[0]["pid"]) and
          first < out.find("Out of memory") < out.find("GPU 0 of process %d" % rows[0]["pid"]),
          "grow text: rank 1's GPU and its failure before rank 0's detail")
    check(re.search(r"rank 0 was ended by signal 15 \(SIGTERM\) at [0-9.]+ s, [0-9.]+ s after rank 1 ran out", out),
          "grow text: rank 0 stopped with the job")
    check("Growth, not a leak" in out and "Leak: too few steps" not in out[first:out.find("GPU 0 of process")],
          "grow text: rank 1's growth named, not 'too few steps'")


def test_many():
    """17 GPUs, 33 processes on one: none dropped."""
    exp = make("many")
    doc, _ = analyze_json(*exp["paths"])
    eq(len(doc["traces"]), sum(exp["shares"]), "every process")
    eq(len(doc["gpus"]), len(exp["shares"]), "every shared GPU, past 16")
    eq([len(g["by_process"]) for g in doc["gpus"]], exp["shares"], "every process on each, past 32")
    eq([g["peak"] for g in doc["gpus"]], [n * MiB for n in exp["shares"]], "peak of all together")
    eq(sorted({x["bytes"] for g in doc["gpus"] for x in g["by_process"]}), [MiB],
       "each process at that moment")


def test_cuda():
    """A CUDA program: NVTX ranges as layers, a request beyond the device."""
    exp = make("cuda")
    doc, _ = analyze_json("cuda.json.gz")
    d = dev(doc)
    eq(d["peak"]["bytes"], exp["peak"], "peak")
    eq(d["peak"]["by_category"], None, "no categories without PyTorch")
    solver = find_node(d["peak"]["by_layer"], ["solver"])
    eq(solver and solver["bytes"], 350 * MiB, "NVTX range as a layer")
    inner = find_node(d["peak"]["by_layer"], ["solver", "iteration"])
    eq(inner and inner["bytes"], 300 * MiB, "nested NVTX range")
    eq([a["kind"] for a in d["ooms"][0]["advice"]], ["request_too_large"], "advice")
    eq(d["ooms"][0]["layer"], "solver", "the failed allocation's range")
    # a Python program traced in the default mode that never imports torch
    # (CuPy's pool, say): what it is, a CUDA program, not "nothing allocated"
    for mode in ("native", "tensor"):
        sim = synth.Sim(mode=mode, total=8 * GiB, cmdline="python3 app.py")
        sim.alloc(256 * MiB, "other", api="cudaMalloc", fw=False)
        sim.alloc(64 * MiB, "other", api="cudaMalloc", fw=False)
        sim.write(os.path.join(TMP, "notorch.json.gz"))
        doc, _ = analyze_json("notorch.json.gz")
        d = dev(doc)
        eq((d["mode"], d["peak"]["bytes"], d["peak"]["by_category"]), ("cuda", 320 * MiB, None),
           mode + " mode, no torch: analyzed as a CUDA program")
        notes = doc["traces"][0]["notes"]
        check(any("PyTorch was not in this process" in n for n in notes) and
              not any("segment" in n or "hook" in n for n in notes), "its notes: %r" % notes)
        rc, out, _ = run("notorch.json.gz")
        check("no device memory was allocated" not in out and "Peak: 320 MiB" in out, "text: its peak")
    # the libraries that made the calls, as the recorder names them: known
    # ones by name, others by their file
    sim = synth.Sim(mode="native", total=8 * GiB, cmdline="python3 app.py")
    sim.alloc(256 * MiB, "other", api="cudaMalloc", fw=False,
              caller="cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so")
    sim.alloc(32 * MiB, "other", api="cudaMalloc", fw=False, caller="nvidia/cublas/lib/libcublasLt.so.13")
    sim.alloc(8 * MiB, "other", api="cudaMalloc", fw=False, caller="mylib/libsolver.so")
    sim.alloc(4 * MiB, "other", api="cudaMalloc", fw=False)
    sim.alloc(2 * MiB, "other", api="cuMemAlloc", fw=False, caller="libffi.so.8")
    sim.write(os.path.join(TMP, "libs.json.gz"))
    doc, _ = analyze_json("libs.json.gz")
    d = dev(doc)
    eq({g["api"]: g["bytes"] for g in d["peak"]["by_api"]},
       {"cudaMalloc (CuPy)": 256 * MiB, "cudaMalloc (cuBLAS)": 32 * MiB,
        "cudaMalloc (libsolver.so)": 8 * MiB, "cudaMalloc": 4 * MiB, "cuMemAlloc (ctypes)": 2 * MiB},
       "memory by API and library")
    eq([t["library"] for t in d["peak"]["top"]], ["CuPy", "cuBLAS", "libsolver.so", None, "ctypes"],
       "each allocation's library")
    rc, out, _ = run("libs.json.gz")
    check("cudaMalloc (CuPy)" in out, "text: by API and library")
    # the first allocation fails, nothing else happens (meta, device, oom, end):
    # a report without a peak, the failure in it (UBSan once found a NULL
    # passed to memcpy here)
    sim = synth.Sim(mode="cuda", total=1 * GiB, cmdline="./app")
    sim.oom(2 * GiB)
    sim.write(os.path.join(TMP, "oom_only.json.gz"))
    for fmt in ([], ["--json"]):
        rc, out, err = run(*(fmt + ["oom_only.json.gz"]))
        eq((rc, err), (0, ""), "only a failed allocation %s" % fmt)
    doc, _ = analyze_json("oom_only.json.gz")
    eq((dev(doc)["oom_count"], dev(doc)["ooms"][0]["request"]), (1, 2 * GiB), "its failure reported")


def test_names():
    """A range's name with an escape sequence, a C1 CSI (U+009B) and a bidi
    override (U+202E): the text report shows them escaped, the JSON one
    carries the name as it is."""
    evil = "solve\x1b[2J\u009b31m\u202eevil\ttab"
    sim = synth.Sim(mode="cuda", total=1 * GiB, cmdline="./app \u202e\x07")
    sim.push(evil)
    sim.alloc(64 * MiB, "other")
    sim.oom(2 * GiB)
    sim.pop()
    sim.write(os.path.join(TMP, "names.json.gz"))
    rc, out, err = run("names.json.gz")
    eq(rc, 0, "analyze")
    raw = out.encode("utf-8")
    for bad, what in ((b"\x1b", "ESC"), (b"\xc2\x9b", "U+009B"), (b"\xe2\x80\xae", "U+202E"),
                      (b"\x07", "BEL"), (b"\t", "TAB")):
        check(bad not in raw, "text: no raw %s" % what)
    check("solve\\x1B[2J\\u009B31m\\u202Eevil\\x09tab" in out, "text: the range's name escaped")
    check("./app \\u202E\\x07" in out, "text: the command line escaped")
    doc, _ = analyze_json("names.json.gz")
    eq(dev(doc)["ooms"][0]["layer"], evil, "JSON: the name as it is")
    eq(doc["traces"][0]["cmdline"], "./app \u202e\x07", "JSON: the command line as it is")


def strip_trace(doc):
    for t in doc["traces"]:
        for k in ("path", "max_events_held", "watermarks", "late_events", "notes", "events"):
            t.pop(k, None)
    return doc


def test_order():
    """Out of order within watermark windows, no watermarks, late events."""
    exp = make("order")
    base, _ = analyze_json("order.sorted.json")
    eq(dev(base)["peak"]["bytes"], exp["peak"]["bytes"], "peak in order")
    for f in ("order.shuffled.json.gz", "order.nowm.json.gz"):
        doc, _ = analyze_json(f)
        t = doc["traces"][0]
        eq(t["late_events"], 0, f + ": nothing late")
        check(t["max_events_held"] < t["events"] / 2, f + ": a bounded window (%d of %d events held)"
              % (t["max_events_held"], t["events"]))
        check(strip_trace(doc) == strip_trace(json.loads(json.dumps(base))), f + ": same answers as in order")
    doc, _ = analyze_json("order.late.json.gz")
    eq(doc["traces"][0]["late_events"], 1, "a record later than its window is counted")
    check(any("late" in n for n in doc["traces"][0]["notes"]), "and said")


def test_ranks_oom_steps():
    """Two ranks that ran out of memory: the one at the earlier step runs out
    first, though its clock says later (another host's); at the same step,
    the earlier time."""
    for steps, starts, want in (((3, 2), (0, 10_000_000_000), 1), ((2, 2), (0, 10_000_000_000), 0)):
        d = os.path.join(TMP, "oom_ranks_%d%d" % steps)
        os.makedirs(d, exist_ok=True)
        for rank in (0, 1):
            sim = synth.Sim(total=8 * GiB, pid=7100 + rank, ts_base=1_700_000_000_000_000_000 + starts[rank])
            sim.rank, sim.world_size, sim.local_rank, sim.local_world_size = rank, 2, 0, 1
            synth.train(sim, 4, oom_at=steps[rank], oom_request=3584 * MiB, act=(4 * GiB, 48 * MiB))
            sim.write(os.path.join(d, "rank%d.%d.json.gz" % (rank, sim.pid)))
        doc, _ = analyze_json(d)
        k = doc["ranks"]
        eq(k["first_out_by"], "oom", "%s: by failure" % (steps,))
        eq(k["first_out_rank"], want, "steps %s, rank 1's clock 10 s later: rank %d first" % (steps, want))
        eq([r["first_oom_step"] for r in k["by_rank"]], list(steps), "each rank's failing step")


def test_collective_members():
    """A collective's kernel is told by its name, wherever the name stands
    among the line's members: before "cat" (the recorder's order), where the
    reader skips other kernels early, or after it."""
    for name_first in (True, False):
        sim = synth.Sim()
        sim.alloc(16 * MiB, "parameters")
        sim.tick(100)
        sim.alloc(64 * MiB, "activations")
        t = sim.t
        sim.collective("AllGather", t - 10, t - 5, 100)
        sim.kernel("void at::native::vectorized_elementwise_kernel<4>(int)", t - 20, 200)
        sim.collective("ReduceScatter", t + 200, t + 210, 10)
        lines = sim.lines(shuffle=False)
        if not name_first:
            lines = [json.dumps({k: v for k, v in sorted(json.loads(x).items(), key=lambda kv: kv[0] == T.NAME)},
                                separators=(",", ":")) for x in lines]
            check(all(x.index('"name"') > x.index('"cat"') for x in lines if '"kernel"' in x), "names last")
        path = os.path.join(TMP, "coll_order.json")
        open(path, "w").write("[\n" + ",\n".join(lines) + "\n]\n")
        doc, _ = analyze_json(path)
        c = dev(doc)["peak"]["collectives"]
        how = "name first" if name_first else "name last"
        eq(c["seen"], 2, how + ": two collectives, PyTorch's kernel not one")
        eq([x["op"] for x in c["during"]], ["AllGather"], how + ": the all-gather outstanding at the peak")
        eq(c["after"]["op"], "ReduceScatter", how + ": the next")
        eq(c["during"][0]["kernel"], "ncclDevKernel_AllGather_RING_LL", how + ": the kernel, no arguments")


def passes(paths):
    """How many times analyze read the traces (GPUPROF_TEST_PASSES=say)."""
    rc, out, err = run(*paths, env={"GPUPROF_TEST_PASSES": "say"})
    m = re.search(r"the traces were read (\d+) times?", err)
    return int(m.group(1)) if m else None


def hook_trace(path, order):
    """A native trace with the hook of one segment at A and its cudaMalloc,
    written in the order given: (name, ts in us) of "attach", "malloc",
    "cudafree", "segment", "block", "blockfree", "wm" (a watermark),
    "pinned" (NCCL's pinned host memory, elsewhere), "device1" (a second
    device's gpuprof.device)."""
    pid, gpu = 4343, 1_000_434_300
    A = 0x7f0000000000
    meta = {T.PH: "i", T.NAME: EV.META.name, T.CAT: CAT.GPUPROF, T.PID: pid, T.TID: 0, T.TS: 0.0, T.S: "g",
            T.ARGS: {F.FORMAT: 1, F.VERSION: "0.1.0", F.PID: pid, F.PPID: 1, F.CMDLINE: "python3 t.py",
                     F.HOSTNAME: "synth", F.START_UNIX_NS: 1_700_000_000_000_000_000,
                     F.TS_BASE_NS: 1_700_000_000_000_000_000, F.CLOCK: "cupti", F.MODE: "native",
                     F.MEMORY_DEVICE: "context", F.GPU_PID_BASE: 1_000_000_000 + pid * 100}}
    dev = {T.PH: "i", T.NAME: EV.DEVICE.name, T.CAT: CAT.GPUPROF, T.PID: gpu, T.TID: 0, T.TS: 0.0, T.S: "g",
           T.ARGS: {F.DEVICE: 0, F.NAME: "Synthetic GPU", F.TOTAL_MEMORY: 8 * GiB, F.UUID: "GPU-1",
                    F.CC: "9.0", F.GPU_PID: gpu}}
    seg, block = 64 * MiB, 8 * MiB

    def ev(name, ts, p, args, scope="t", tid=0):
        return {T.PH: "i", T.NAME: name, T.CAT: CAT.MEMORY, T.PID: p, T.TID: tid, T.TS: ts, T.S: scope,
                T.ARGS: args}
    cuda = {F.ADDR: "0x%x" % A, F.BYTES: seg, F.KIND: KIND.DEVICE, F.DEVICE: 0, F.STREAM: -1, F.CORR: 0,
            F.ASYNC: False, F.THREAD: 7}
    lines = [meta, dev]
    for what, ts in order:
        if what == "wm":
            lines.append({T.PH: "i", T.NAME: EV.WATERMARK.name, T.CAT: CAT.GPUPROF, T.PID: pid, T.TID: 0,
                          T.TS: ts, T.S: "g"})
        elif what == "attach":
            lines.append(ev(EV.TORCH_ATTACH.name, ts, pid, {F.DEVICE: 0, F.ALLOCATED: 0, F.RESERVED: 0,
                                                            F.STACKS: False}, "g"))
        elif what == "pinned":
            lines.append(ev(EV.ALLOC.name, ts, gpu, dict(cuda, **{F.ADDR: "0x%x" % (A + (1 << 32) + int(ts * 64)),
                                                                 F.BYTES: 4, F.KIND: KIND.PINNED_HOST,
                                                                 F.API: "cuMemHostAlloc"})))
        elif what == "device1":
            lines.append(dict(dev, **{T.PID: gpu + 1, T.ARGS: dict(dev[T.ARGS], **{F.DEVICE: 1,
                                                                                  F.GPU_PID: gpu + 1})}))
        elif what in ("malloc", "cudafree"):
            lines.append(ev(EV.ALLOC.name if what == "malloc" else EV.FREE.name, ts, gpu,
                            dict(cuda, **{F.API: "cuMemAlloc_v2" if what == "malloc" else "cuMemFree_v2"})))
        elif what == "segment":
            lines.append(ev(EV.TORCH_SEGMENT_ALLOC.name, ts, gpu, {F.ADDR: "0x%x" % A, F.BYTES: seg,
                                                                    F.DEVICE: 0, F.STREAM: "0x0",
                                                                    F.MAPPED: False}))
        else:
            args = {F.ADDR: "0x%x" % A, F.BYTES: block, F.REQUESTED: block, F.DEVICE: 0, F.STREAM: "0x0"}
            lines.append(ev(EV.TORCH_ALLOC.name if what == "block" else EV.TORCH_FREE.name, ts, pid, args,
                            tid=7))
    end = max(ts for _, ts in order) + 1
    lines.append({T.PH: "i", T.NAME: EV.END.name, T.CAT: CAT.GPUPROF, T.PID: pid, T.TID: 0, T.TS: end,
                  T.S: "g", T.ARGS: {F.CLEAN: True, F.RECOVERED: False, F.DROPPED_CUPTI: 0,
                                     F.DROPPED_HOST: 0}})
    with gzip.open(path, "wt") as f:
        f.write("[\n" + "".join(json.dumps(x, separators=(",", ":")) + ",\n" for x in lines[:-1]) +
                json.dumps(lines[-1], separators=(",", ":")) + "\n]\n")
    return path


def test_one_pass():
    """Native traces with the allocator hook, the default mode's, are read
    once: the hook's events and each segment's own event are read before
    what they decide leaves the reorder window (analyze.c), so the trace is
    analyzed as the second of two passes would from the start. What it says
    is what two passes say (GPUPROF_TEST_PASSES=2), for every trace the
    project has and every scenario; where the guess does not hold, the
    trace is read in two passes after all, and says the same. A process
    that gave the analysis no event (torchrun's own) is known not to be
    PyTorch's without a second pass."""
    real = sorted(os.path.join(ROOT, "tests", "data", "single-h100", f)
                  for f in os.listdir(os.path.join(ROOT, "tests", "data", "single-h100"))
                  if f.endswith(".json.gz"))
    check(len(real) >= 6, "the recorded traces: %d" % len(real))
    for path in real:
        eq(passes([path]), 1, os.path.basename(path) + ": read once")
    # torchrun's own trace holds no event: what it is needs no second pass
    # ... and in ranks2-ddp-h200 the hook's first event is 3.4 s into each
    # rank's trace: read once by reading ahead to it
    for d in ("ranks2-grow-h200", "ranks2-uneven-h200", "ranks2-ddp-h200"):
        eq(passes([os.path.join(ROOT, "tests", "data", d)]), 1, d + ": the run directory read once")
    cases = [[p] for p in real]
    for top in (os.path.join(ROOT, "samples", "traces"), os.path.join(ROOT, "tests", "data")):
        for d, _, files in sorted(os.walk(top)):
            traces = sorted(os.path.join(d, f) for f in files if f.endswith(".json.gz"))
            cases += [[t] for t in traces if [t] not in cases]
            if traces and d != top:
                cases.append([d])  # a run directory
    for scenario in re.findall(r'name == "(\w+)"', open(os.path.join(HERE, "synth.py")).read()):
        d = os.path.join(TMP, "one_pass", scenario)
        os.makedirs(d, exist_ok=True)
        synth.scenario(scenario, d)
        cases.append(sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".json.gz")))
        if scenario.startswith("hook"):
            eq(passes(cases[-1]), 1, scenario + ": read once")
    # a segment's own event read long after its cudaMalloc left the window:
    # pass 1 finds the cudaMalloc alive there, the source had not marked it
    late = hook_trace(os.path.join(TMP, "seg_late.json.gz"),
                      [("attach", 10), ("malloc", 20), ("wm", 100), ("wm", 200), ("wm", 300), ("wm", 400),
                       ("wm", 500), ("segment", 600), ("block", 610), ("blockfree", 620), ("wm", 700)])
    # marked (its segment read first, CUPTI's record later), then freed
    # before that segment: pass 1 would not have left it out
    freed = hook_trace(os.path.join(TMP, "seg_freed.json.gz"),
                       [("attach", 10), ("segment", 40), ("block", 41), ("malloc", 20), ("cudafree", 30),
                        ("blockfree", 50), ("wm", 100), ("wm", 200), ("wm", 300), ("wm", 400)])
    # the plain case: its segment read before the cudaMalloc comes
    plain = hook_trace(os.path.join(TMP, "seg_plain.json.gz"),
                       [("attach", 10), ("segment", 40), ("block", 41), ("malloc", 20), ("blockfree", 50),
                        ("wm", 100), ("wm", 200), ("wm", 300), ("wm", 400)])
    # the hook read seconds in, as under torch.distributed: what left the
    # window before it waits for it (an_source_look_ahead)
    head = [("pinned", 20), ("wm", 100), ("wm", 200), ("wm", 300), ("wm", 400), ("wm", 500)]
    tail = [("attach", 510), ("segment", 600), ("block", 610), ("malloc", 590), ("blockfree", 620), ("wm", 700)]
    hook_late = hook_trace(os.path.join(TMP, "hook_late.json.gz"), head + tail)
    # ... and a second device said meanwhile: what waited would see it
    dev_late = hook_trace(os.path.join(TMP, "dev_late.json.gz"), head + [("device1", 505)] + tail)
    # ... or more waiting than the look ahead holds: two passes
    many = [("pinned", 20 + i / 1000) for i in range(140000)]
    hook_later = hook_trace(os.path.join(TMP, "hook_later.json.gz"), many + head[1:] + tail)
    for path, n in ((late, 3), (freed, 3), (plain, 1), (hook_late, 1), (dev_late, 3), (hook_later, 2)):
        eq(passes([path]), n, os.path.basename(path) + ": times read")
        cases.append([path])
    doc, _ = analyze_json(plain)
    peak = dev(doc)["peak"]
    eq((peak["bytes"], peak["reserved"], peak["other"], peak["device_total"]), (8 * MiB, 64 * MiB, 0, 64 * MiB),
       "seg_plain: the segment's cudaMalloc is its reserved bytes, not other memory")
    check(len(cases) > 40, "cases: %d" % len(cases))
    for paths in cases:
        for extra in ([], ["--json"]):
            one = run(*(extra + paths))
            two = run(*(extra + paths), env={"GPUPROF_TEST_PASSES": "2"})
            if one != two:
                diff = next(((a, b) for a, b in zip(
                    ("exit %d" % one[0],) + tuple((one[1] + one[2]).splitlines()),
                    ("exit %d" % two[0],) + tuple((two[1] + two[2]).splitlines())) if a != b),
                    ("(lengths differ)", ""))
                check(False, "%s %s: read once says %r where two passes say %r" %
                      (" ".join(os.path.basename(p) for p in paths), extra, diff[0], diff[1]))


def test_signal_end():
    """A trace the recorder finished in a signal's handler: complete, not
    clean, the signal said in the note, the JSON and the header."""
    make("train")
    sim = synth.Sim()
    synth.train(sim, 4)
    sim.end_args[F.CLEAN] = False
    sim.end_args[F.SIGNAL] = 15
    sim.write(os.path.join(TMP, "sigterm.json.gz"))
    doc, err = analyze_json("sigterm.json.gz")
    t = doc["traces"][0]
    eq((t["complete"], t["clean_exit"], t["end_signal"]), (True, False, 15), "ended by SIGTERM")
    check(any("ended by signal 15 (SIGTERM)" in n for n in t["notes"]), "the note says the signal")
    eq(err, "", "nothing on stderr")
    rc, out, _ = run("sigterm.json.gz")
    check("complete (the program was ended by a signal)" in out, "the text header says it")
    full, _ = analyze_json("train.json.gz")
    eq(full["traces"][0]["end_signal"], None, "a normal end says no signal")


def test_cut():
    """Cut short (truncated gzip, half line), recovered."""
    make("train")
    sim = synth.Sim()
    synth.train(sim, 6)
    sim.write(os.path.join(TMP, "cut.flush.json.gz"), cut="flush")
    sim.write(os.path.join(TMP, "cut.middle.json.gz"), cut="middle")
    full, _ = analyze_json("train.json.gz")
    for f in ("cut.flush.json.gz", "cut.middle.json.gz"):
        doc, err = analyze_json(f)
        eq(doc["traces"][0]["cut_short"], True, f + ": cut short")
        check("was cut short" in err, f + ": said on stderr")
        eq(dev(doc)["peak"]["bytes"], dev(full)["peak"]["bytes"], f + ": the peak is before the cut")
    shutil.copy(os.path.join(TMP, "cut.flush.json.gz"), os.path.join(TMP, "cut.rec.json.gz"))
    p = subprocess.run([GP, "recover", "cut.rec.json.gz"], cwd=TMP, capture_output=True)
    eq(p.returncode, 0, "gpuprof recover")
    doc, err = analyze_json("cut.rec.json.gz")
    t = doc["traces"][0]
    eq((t["cut_short"], t["recovered"], t["complete"]), (False, True, False), "recovered trace")
    check(any("gpuprof recover" in n for n in t["notes"]), "note on recovery")
    eq(err, "", "a recovered trace is not cut short")
    # a trace that holds its metadata only
    open(os.path.join(TMP, "meta_only.json"), "w").write(
        "[\n" + sim.lines(end=False)[0] + ",\n")
    rc, out, err = run("meta_only.json")
    eq(rc, 0, "a trace cut right after gpuprof.meta")
    check("no GPU memory activity" in out, "says there is nothing")


def bad_cases():
    cases = sorted(os.listdir(os.path.join(HERE, "bad")))
    yield from ((c, os.path.join(HERE, "bad", c)) for c in cases)
    # too large to keep in the repository
    big = os.path.join(TMP, "long_line.json.gz")
    with gzip.open(big, "wb") as f:
        f.write(b'[\n' + synth.Sim().lines()[0].encode() + b',\n{"ph":"B","name":"')
        chunk = b"a" * (1 << 20)
        for _ in range(65):
            f.write(chunk)
        f.write(b'"}\n]\n')
    yield "long_line", big
    deep = os.path.join(TMP, "deep.json")
    with open(deep, "wb") as f:
        f.write(b'[\n' + synth.Sim().lines()[0].encode() + b',\n{"a":' + b"[" * 100000 + b"]" * 100000 + b"}\n]\n")
    yield "deep", deep
    over = os.path.join(TMP, "overflow.json.gz")
    sim = synth.Sim(mode="cuda")
    lines = [sim.lines(end=False)[0]]
    for i in range(20000):
        lines.append(json.dumps({T.PH: EV.ALLOC.ph, T.S: EV.ALLOC.scope, T.NAME: EV.ALLOC.name,
                                 T.CAT: EV.ALLOC.cat, T.PID: sim.gpu_pid, T.TID: 0, T.TS: i + 1.0,
                                 T.ARGS: {F.ADDR: "0x%x" % (0x10000 + i * 4096), F.BYTES: 1 << 50,
                                          F.KIND: KIND.DEVICE, F.DEVICE: 0}}, separators=(",", ":")))
    with gzip.open(over, "wb") as f:
        f.write(("[\n" + ",\n".join(lines) + "\n]\n").encode())
    yield "overflow", over
    yield from bad_history_marks()


def test_bad():
    """Bad input: exit 2, one line on stderr."""
    for name, path in bad_cases():
        for extra in ([], ["--json"]):
            rc, out, err = run(*(extra + [path]))
            eq(rc, 2, "%s %s: exit status" % (name, extra))
            eq(out, "", "%s: nothing on stdout" % name)
            lines = err.splitlines()
            check(len(lines) == 1 and lines[0].startswith("gpuprof: "),
                  "%s: one gpuprof: line on stderr, got %r" % (name, err[:300]))


def test_threads():
    """The reader's workers scan and decode lines (decode.c) as the reading
    thread does: every bad case, gzipped so that workers read it, and the
    scenarios say the same on 1 and 4 threads."""
    cases = []
    for name, path in bad_cases():
        if os.path.isdir(path):
            continue
        data = open(path, "rb").read()
        if data[:2] != b"\x1f\x8b":
            gz = os.path.join(TMP, "threads_%s.json.gz" % re.sub(r"\W", "_", name))
            with gzip.open(gz, "wb") as f:
                f.write(data)
            path = gz
        cases.append((name, [path]))
    for scenario in re.findall(r'name == "(\w+)"', open(os.path.join(HERE, "synth.py")).read()):
        d = os.path.join(TMP, "threads", scenario)
        os.makedirs(d, exist_ok=True)
        synth.scenario(scenario, d)
        cases.append((scenario, sorted(os.path.join(d, f) for f in os.listdir(d)
                                       if f.endswith(".json.gz"))))
    check(len(cases) > 40, "cases: %d" % len(cases))
    for name, paths in cases:
        for extra in ([], ["--json"]):
            one = run(*(extra + paths), env={"GPUPROF_THREADS": "1"})
            four = run(*(extra + paths), env={"GPUPROF_THREADS": "4"})
            if four != one:  # the first line that differs, not both reports
                diff = next(((a, b) for a, b in zip(
                    ("exit %d" % one[0],) + tuple((one[1] + one[2]).splitlines()),
                    ("exit %d" % four[0],) + tuple((four[1] + four[2]).splitlines())) if a != b),
                    ("(lengths differ)", ""))
                check(False, "%s %s: 4 threads say %r where 1 says %r" % (name, extra, diff[1], diff[0]))


def test_cli():
    """Options and their errors."""
    make("train")
    os.makedirs(os.path.join(TMP, "emptydir"), exist_ok=True)
    for args, why in ((["--top", "0", "train.json.gz"], "--top 0"),
                      (["--top", "1x", "train.json.gz"], "--top 1x"),
                      (["--top", "-3", "train.json.gz"], "--top -3"),
                      (["--top", " 3", "train.json.gz"], "--top ' 3'"),
                      (["--device", "64", "train.json.gz"], "--device 64"),
                      (["--process", "0", "train.json.gz"], "--process 0"),
                      (["--process", "99999999999", "train.json.gz"], "--process too large"),
                      (["--bogus", "train.json.gz"], "unknown option"),
                      ([], "no TRACE"),
                      (["missing.json.gz"], "missing file"),
                      (["emptydir"], "a directory with no trace")):
        rc, out, err = run(*args)
        eq(rc, 2, why + ": exit status")
        eq(out, "", why + ": stdout")
        check(err.startswith("gpuprof: "), why + ": message %r" % err)
    p = subprocess.run([GP, "--analyze", "--json", "train.json.gz"], cwd=TMP, capture_output=True)
    eq(p.returncode, 0, "gpuprof --analyze")
    p = subprocess.run([GP, "--help"], capture_output=True, text=True)
    check("gpuprof analyze TRACE|RUN..." in p.stdout, "--help lists analyze")
    p = subprocess.run([GP, "analyze", "--help"], capture_output=True, text=True)
    check("gpuprof analyze TRACE|RUN..." in p.stdout and "--top N" in p.stdout, "analyze --help")
    rc, out, _ = run("train.json.gz", "--json", "--top", "2")
    eq(rc, 0, "options after TRACE")


def test_sample():
    """The H100 trace of samples/alloc_sizes: the peak its own events give."""
    path = os.path.join(ROOT, "samples", "traces", "alloc_sizes.h100.json.gz")
    ev = json.load(gzip.open(path, "rt"))
    mem = sorted((e for e in ev if e.get(T.CAT) == CAT.MEMORY and e[T.NAME] in (EV.ALLOC.name, EV.FREE.name)),
                 key=lambda e: e[T.TS])
    live, cur, peak, peak_ts, at_peak = {}, 0, 0, None, {}
    for e in mem:
        a = e[T.ARGS]
        if e[T.NAME] == EV.ALLOC.name:
            live[a[F.ADDR]] = a[F.BYTES]
            cur += a[F.BYTES]
            if cur > peak:
                peak, peak_ts, at_peak = cur, e[T.TS], dict(live)
        else:
            cur -= live.pop(a[F.ADDR])
    doc, _ = analyze_json(path)
    d = dev(doc)
    eq(d["peak"]["bytes"], peak, "peak")
    eq(d["peak"]["t"], round(peak_ts / 1e6, 6), "peak time")
    eq(d["summary"]["allocated"]["end"], cur, "live at the end")
    eq(d["summary"]["live_allocations_end"], len(live), "allocations live at the end")
    eq(d["summary"]["allocations"], sum(1 for e in mem if e[T.NAME] == EV.ALLOC.name), "allocations")
    eq(d["capacity"], 85017493504, "capacity")
    eq(d["name"], "NVIDIA H100 80GB HBM3", "device name")
    eq([t["bytes"] for t in d["peak"]["top"]], sorted(at_peak.values(), reverse=True)[:10],
       "the largest allocations at the peak")
    eq(d["peak"]["live_allocations"], len(at_peak), "allocations live at the peak")


GOLDEN = ("train", "leak", "oom", "cuda", "hook")


def golden(name, args, file, update):
    """analyze ARGS NAME.json.gz against golden/FILE (written with update)."""
    gdir = os.path.join(HERE, "golden")
    os.makedirs(gdir, exist_ok=True)
    rc, out, err = run(*(args + [name + ".json.gz"]))
    eq(rc, 0, "%s %s: exit status" % (name, " ".join(args)))
    out = re.sub(r'"gpuprof_version": "[^"]*"', '"gpuprof_version": "X"', out)
    path = os.path.join(gdir, file)
    if update:
        open(path, "w").write(out)
        return
    want = open(path).read() if os.path.exists(path) else None
    if not check(out == want, "%s differs from golden/ (regenerate: test_analyze.py GPUPROF golden --update)" % file):
        import difflib
        sys.stderr.writelines(list(difflib.unified_diff(
            (want or "").splitlines(True), out.splitlines(True), "golden", "now"))[:60])


def test_expandable_segments():
    """With expandable segments (an H100 trace of fragmentation.py with
    them on), --at lays PyTorch's blocks out in the runs of pages it had
    mapped: the runs add up to reserved then (the pages PyTorch mapped,
    as the timeline counts them), their blocks to PyTorch's own live
    bytes, none outside a run; a run never touches the next."""
    path = os.path.join(ADVICE_H100, "frag_expandable.h100.json.gz")
    for at in ("0.36", "0.39", "0.3935"):
        rc, out, _ = run("--json", "--at", at, path)
        if not eq(rc, 0, "expandable --at %s" % at):
            continue
        d = json.loads(out)["devices"][0]
        a, segs = d["at"], d["at"]["segments"]
        if not check(segs, "expandable --at %s: the runs of mapped pages are laid out" % at):
            continue
        eq(sum(g["bytes"] for g in segs), a["reserved"], "expandable --at %s: the runs add up to reserved" % at)
        ends = [(int(g["addr"], 16), int(g["addr"], 16) + g["bytes"]) for g in segs]
        check(all(e0 < s1 for (_, e0), (s1, _) in zip(ends, ends[1:])), "expandable --at %s: runs apart, by address" % at)
        check(all(sum(b[1] for b in g["blocks"]) == g["used"] for g in segs), "expandable --at %s: blocks add up to used" % at)
        # PyTorch's blocks alive then: what the framework held (bytes)
        eq(sum(g["used"] for g in segs), a["bytes"], "expandable --at %s: the blocks are PyTorch's live bytes" % at)
    # the text says it in a line
    rc, out, _ = run("--at", "0.39", path)
    check("PyTorch's segments then: 1, 720 MiB reserved, 276 MiB of it in blocks" in out,
          "expandable --at 0.39: the text's line of segments")


def test_moments_past_refs_budget():
    """Moments past their budget of references (a peak, then 40,000
    allocations alive, then 60,000 events of churn: the stretches merge early, twice as wide
    as the events alone would make them): still end to end over the
    events, each moment inside its stretch's times, the stretches in time
    order, the most live one the peak."""
    sim = synth.Sim(mode="cuda")
    # the peak first (the simulator copies what is live at each new peak)
    sim.free(sim.alloc(1 << 30, None))
    for _ in range(40000):
        sim.alloc(4096, None)
        sim.tick(1)
    for i in range(30000):
        a = sim.alloc(8192 + (i % 7) * 512, None)
        sim.tick(1)
        sim.free(a)
        sim.tick(1)
    path = os.path.join(TMP, "refs_budget.json.gz")
    sim.write(path)
    page = os.path.join(TMP, "refs_budget.html")
    rc, _, err = gp_cmd("report", "--force", "-o", page, path)
    if not eq(rc, 0, "report of the churn: %s" % err.strip()[-200:]):
        return
    data = re.search(r'<script[^>]*id="gpuprof-data"[^>]*>(.*?)</script>', open(page).read(), re.S)
    dev = json.loads(data.group(1))["run"]["devices"][0]
    ms = sorted(dev["moments"], key=lambda m: m["first_event"])
    # 100,002 events in stretches of a power of two: 512 would do; the
    # references (about 40,000 a moment) make them wider
    check(ms[0]["events"] > 512 and len(ms) <= 256, "the stretches merged early: %d of %d events" % (len(ms), ms[0]["events"]))
    check(ms[0]["first_event"] == 0 and all(a["first_event"] + a["events"] == b["first_event"] for a, b in zip(ms, ms[1:]))
          and ms[-1]["first_event"] + ms[-1]["events"] == 100002, "the stretches lie end to end over the 100,002 events")
    eq([m["t"] for m in ms if not m["from"] - 1e-6 <= m["t"] <= m["to"] + 1e-6], [], "every moment inside its stretch")
    check(all(a["to"] <= b["from"] + 1e-6 for a, b in zip(ms, ms[1:])), "the stretches in time order")
    peak = analyze_json(path)[0]["devices"][0]["peak"]
    eq(max(m["bytes"] for m in ms), peak["bytes"], "the most live moment is the peak")


def test_golden():
    """Exact text and JSON reports; --update rewrites them."""
    update = "--update" in sys.argv
    for name in GOLDEN:
        make(name)
        for fmt, args in (("txt", []), ("json", ["--json"])):
            golden(name, args, "%s.%s" % (name, fmt), update)
    # --at: what was live at a moment, inside a step (train) and at a
    # failed allocation's (oom; cuda: NVTX ranges; hook: PyTorch's segments
    # and their blocks), as text and JSON
    for name, at in (("train", "0.0405"), ("oom", "0.02"), ("cuda", "0.1"), ("hook", "0.042")):
        make(name)
        for fmt, args in (("txt", []), ("json", ["--json"])):
            golden(name, args + ["--at", at], "%s.at.%s" % (name, fmt), update)
    # what --at refuses
    for bad in ("-1", "x", "1e9", ""):
        rc, out, err = run("--at", bad, "train.json.gz")
        eq(rc, 2, "--at %r: a usage error" % bad)


if __name__ == "__main__":
    sys.exit(checks.main(globals(), "gpuprof-analyze."))
