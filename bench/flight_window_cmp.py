"""bench/flight_window.sh's comparison: each trace's peaks (analyze --json)
beside the program's own, and the breakdown at the peak of the end's dump
against the full trace's, member by member."""
import json
import os
import sys

d = sys.argv[1]


def load(name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


for f in ["full", "win", "win.dump1", "oom", "oom.dump1", "oom.dump2"]:
    a = load(f + ".analyze.json")
    if not a or not a["devices"]:
        print(f, "no analysis")
        continue
    s = a["devices"][0]["summary"]
    print(f"{f}: allocated peak {s['allocated']['peak']} at {s['allocated'].get('peak_t')} s, "
          f"reserved peak {s['reserved']['peak']}")
for f in ["plain", "full", "win", "oom"]:
    print(f, "program:", load(f + ".json"))
full, win = load("full.analyze.json"), load("win.analyze.json")
if full and win and full["devices"] and win["devices"]:
    pf, pw = full["devices"][0]["peak"], win["devices"][0]["peak"]
    for k in pf:
        if k == "t":
            continue
        same = json.dumps(pf[k], sort_keys=True) == json.dumps(pw.get(k), sort_keys=True)
        print(f"peak.{k}: {'same' if same else 'differs'}")
    for k in ["leak"]:
        print(k, "full:", json.dumps(full["devices"][0][k])[:200])
        print(k, "win: ", json.dumps(win["devices"][0][k])[:200])
