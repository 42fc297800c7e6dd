"""bench/flight_gpt2.sh's results side by side: RESULT lines.
usage: flight_gpt2_cmp.py DIR"""
import json
import os
import statistics
import sys

d = sys.argv[1]


def load(name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def dev(name):
    a = load(name + ".analyze.json")
    return a["devices"][0] if a and a.get("devices") else None


def dumps(stem):
    """{reason: device} of stem.dumpN.json.gz's analyses"""
    out = {}
    for n in range(1, 10):
        x = dev("%s.dump%d" % (stem, n))
        if x and x.get("outline"):
            out[x["outline"]["dump"]] = x
    return out


def cats(s):
    return {c["category"]: c["bytes"] for c in (s or {}).get("by_category") or []}


def say(*a):
    print("RESULT", *a)


full, fl = dev("full"), dev("flight")
fres, lres = load("full.res") or {}, load("flight.res") or {}
if full and fl:
    fp = {p["step"]: p["peak"] for p in full["steps"]["series"]}
    op = {p["step"]: p["peak"] for p in fl["steps"]["series"]}
    same = [s for s in op if s in fp and fp[s] == op[s]]
    say("step peaks: outline", len(op), "steps, full trace", len(fp), "; equal at", len(same),
        "; differ at", sorted(s for s in op if s in fp and fp[s] != op[s])[:10])
    o = fl.get("outline") or {}
    say("run peak: outline", o.get("allocated_peak"), "step", o.get("peak_step"),
        "| full trace peak", full["summary"]["allocated"]["peak"], "| program max", lres.get("max_allocated"))
    say("holders at the run's peak, outline:", {h["name"]: h["bytes"] for h in o.get("by_category", [])})
    say("holders at the peak, full trace:  ", cats(full.get("peak")))
    say("leak: outline", fl["leak"]["verdict"], "| full", full["leak"]["verdict"])
    fd = dumps("flight")
    for reason, key in (("steps", "range_max"), ("profiler", "profile_max")):
        x = fd.get(reason)
        say("%s dump: peak %s | program's max_memory_allocated %s | equal %s" % (
            reason, x and x["summary"]["allocated"]["peak"], lres.get(key),
            bool(x) and x["summary"]["allocated"]["peak"] == lres.get(key)))
    say("signal dump:", "present" if "signal" in fd else "missing")
    ms = lres.get("step_ms") or []
    u = lres.get("usr1_step")
    if ms and u:
        med = statistics.median(ms[5:]) if len(ms) > 6 else statistics.median(ms)
        after = ms[u:u + 5]
        say("SIGUSR1 after step %d: median step %.1f ms, the next five %s ms, the most over median %.1f ms" % (
            u, med, [round(v, 1) for v in after], max(after) - med if after else float("nan")))
    sz = {n: os.path.getsize(os.path.join(d, n + ".json.gz")) for n in ("full", "flight")
          if os.path.exists(os.path.join(d, n + ".json.gz"))}
    say("bytes:", sz)
ores = load("oom.res") or {}
say("oom dump whole after %s s (%s)" % (ores.get("oom_dump_s"), ores.get("oom_dump")))
gf, gw = dev("growfull"), dev("growfl")
for name, x in (("full", gf), ("flight", gw)):
    if not x or not x.get("ooms"):
        say("grow", name, "no failed allocation analyzed")
        continue
    e = x["ooms"][0]
    say("grow %s: fatal %s request %s at step %s phase %s layer %s; allocated %s reserved %s; by category %s" % (
        name, e.get("fatal"), e.get("request"), e.get("step"), e.get("phase"), e.get("layer"),
        e.get("allocated"), e.get("reserved"), cats(e)))
gd = dumps("growfl")
say("grow threshold dump:", "present" if "threshold" in gd else "missing", sorted(gd))
