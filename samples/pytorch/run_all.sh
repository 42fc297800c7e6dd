#!/usr/bin/env bash
# Smoke test of the PyTorch samples: runs every script and variant plainly
# (no gpuprof), each under a timeout, and prints one line per run with its
# GPUPROF_TORCH_EXPECT numbers; then checks that each story shows (e.g. the
# leak grows, the fix has the lower peak) and prints a table in MiB.
#
#   bash samples/pytorch/run_all.sh [FILTER]     # FILTER: run only scripts whose name contains it
#
# Environment: PYTHON (default python3), TIMEOUT seconds per run (default 120),
# LOGDIR (default: a temporary directory; each run's full output is kept there).
# Exit status: 0 when every run exited 0 with its GPUPROF_TORCH_EXPECT line and
# every check passed (batch_too_large and batch_doubling catch their
# deliberate OOM and exit 0); 1 otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
limit=${TIMEOUT:-120}
filter=${1:-}
logdir=${LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-torch-samples.XXXXXX")}
mkdir -p "$logdir"
results=$logdir/expect.txt
: >"$results"

runs=(
	"inplace_vs_outofplace.py --variant outofplace"
	"inplace_vs_outofplace.py --variant inplace"
	"no_zero_grad.py --variant nozero"
	"no_zero_grad.py --variant zero"
	"tensors_kept_after_loop.py --variant keep"
	"tensors_kept_after_loop.py --variant del"
	"batch_too_large.py"
	"batch_doubling.py"
	"grad_accumulation.py --variant accum"
	"grad_accumulation.py --variant bigbatch"
	"losses_with_graph.py --variant graph"
	"losses_with_graph.py --variant item"
	"outputs_list_leak.py --variant gpu"
	"outputs_list_leak.py --variant cpu"
	"inference_no_grad.py --variant grad"
	"inference_no_grad.py --variant nograd"
	"amp_vs_fp32.py --variant amp"
	"amp_vs_fp32.py --variant fp32"
	"fragmentation.py --variant default"
	"fragmentation.py --variant expandable"
)

fail=0
n=0
for r in "${runs[@]}"; do
	read -r -a argv <<<"$r"
	script=${argv[0]}
	case "$script" in *"$filter"*) ;; *) continue ;; esac
	n=$((n + 1))
	name=${script%.py}
	[ ${#argv[@]} -gt 2 ] && name=$name-${argv[2]}
	log=$logdir/$name.log
	t0=$(date +%s.%N)
	timeout -k 10 "$limit" "$py" "$here/$script" "${argv[@]:1}" >"$log" 2>&1
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	line=$(grep '^GPUPROF_TORCH_EXPECT ' "$log" | tail -n 1)
	if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
		why="exit $rc"
		[ "$rc" -eq 124 ] && why="timed out after ${limit}s"
		[ "$rc" -eq 0 ] && why="no GPUPROF_TORCH_EXPECT line"
		echo "FAIL ${secs}s $name ($why); last lines of $log:"
		tail -n 15 "$log" | sed 's/^/     | /'
		fail=1
	else
		echo "OK   ${secs}s ${line#GPUPROF_TORCH_EXPECT }"
		echo "$line" >>"$results"
	fi
done
if [ "$n" -eq 0 ]; then
	echo "no sample matches '$filter'"
	exit 1
fi

# Does each story show? (only for the scripts whose runs all succeeded)
"$py" - "$results" <<'EOF' || fail=1
import re
import sys

MiB = 1 << 20
GiB = 1 << 30
runs = {}
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split()[1:])
    runs[(kv["script"], kv["variant"])] = kv


def num(kv, key):
    return float(kv[key])


def ints(kv, key):
    return [int(v) for v in kv[key].split(",") if v]


def flat(values, tol=1 * MiB):
    return max(values) - min(values) <= tol


print()
print("%-26s %-11s %12s %12s %12s" % ("script", "variant", "max_alloc", "max_reserv", "end_alloc"))
for (s, v), kv in runs.items():
    print("%-26s %-11s %12.1f %12.1f %12.1f" % (
        s, v, num(kv, "max_allocated") / MiB, num(kv, "max_reserved") / MiB,
        num(kv, "end_allocated") / MiB))
print()

failed = 0


def check(script, variants, what, fn, fatal=True):
    global failed
    if not all((script, v) in runs for v in variants):
        return
    r = {v: runs[(script, v)] for v in variants}
    try:
        ok, detail = fn(r)
    except Exception as e:  # a missing key, a parse error: a failure too
        ok, detail = False, "error: %r" % (e,)
    tag = "PASS" if ok else ("FAIL" if fatal else "NOTE")
    print("%s %s: %s (%s)" % (tag, script, what, detail))
    if not ok and fatal:
        failed += 1


def r_inplace(r):
    a, b = num(r["outofplace"], "max_allocated"), num(r["inplace"], "max_allocated")
    return a >= 2.5 * b, "%.0f vs %.0f MiB" % (a / MiB, b / MiB)


check("inplace_vs_outofplace", ["outofplace", "inplace"], "out-of-place peak >= 2.5 x in-place",
      r_inplace)
check("inplace_vs_outofplace", ["outofplace", "inplace"], "same result",
      lambda r: (r["outofplace"]["checksum"] == r["inplace"]["checksum"],
                 "%s vs %s" % (r["outofplace"]["checksum"], r["inplace"]["checksum"])), fatal=False)


def r_nozero(r):
    nz, z = ints(r["nozero"], "step_allocated"), ints(r["zero"], "step_allocated")
    p = num(r["nozero"], "param_bytes")
    diff = nz[-1] - z[-1]
    ok = flat(nz) and flat(z) and diff >= 0.9 * p
    return ok, "nozero flat=%s, zero flat=%s, between steps +%.0f MiB, grads %.0f MiB" % (
        flat(nz), flat(z), diff / MiB, p / MiB)


check("no_zero_grad", ["nozero", "zero"],
      "no growth after step 1; without zero_grad the grads stay between steps", r_nozero)
check("no_zero_grad", ["nozero", "zero"], "accumulated gradients grow",
      lambda r: (num(r["nozero"], "grad_norm_last") > 2 * num(r["nozero"], "grad_norm_step1"),
                 "grad norm %.3g -> %.3g" % (num(r["nozero"], "grad_norm_step1"),
                                             num(r["nozero"], "grad_norm_last"))), fatal=False)


def r_kept(r):
    k, d = r["keep"], r["del"]
    held = num(k, "after_loop_allocated") - num(d, "after_loop_allocated")
    peak = num(k, "max_allocated") - num(d, "max_allocated")
    return held >= 1 * GiB and peak >= 0.75 * GiB, \
        "held after the loop +%.0f MiB, peak +%.0f MiB" % (held / MiB, peak / MiB)


check("tensors_kept_after_loop", ["keep", "del"], "the last iteration's graph is held", r_kept)


def r_oom(r):
    kv = r["-"]
    req, msg = num(kv, "oom_request_bytes"), num(kv, "oom_request_msg_bytes")
    ok = kv["oom"] == "1" and msg > 0 and abs(msg - req) <= 0.01 * req
    return ok, "oom=%s request %.2f GiB, message says %.2f GiB, in block %s" % (
        kv["oom"], req / GiB, msg / GiB, kv["oom_block"])


check("batch_too_large", ["-"], "OOM caught with the activation's size, then recovered", r_oom)

UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def r_doubling(r):
    kv = r["-"]
    fit, failed, n = int(kv["fit_batch"]), int(kv["failed_batch"]), int(kv["doublings"])
    act = num(kv, "activation_bytes")
    m = re.fullmatch(r"([0-9.]+)(bytes|KiB|MiB|GiB|TiB)", kv["tried"])
    said = float(m.group(1)) * UNITS[m.group(2)] if m else 0
    # the request PyTorch names is one activation of the failing batch (2
    # decimals in the message), after at most ~10 doublings
    ok = (kv["oom"] == "1" and fit > 0 and failed == 2 * fit and 1 <= n <= 12
          and abs(said - act) <= 0.01 * act)
    return ok, "batch %d fit, %d failed after %d doublings; tried to allocate %s, one activation %.2f GiB" % (
        fit, failed, n, kv["tried"], act / GiB)


check("batch_doubling", ["-"], "doubled until OOM, caught, the last batch that fit kept", r_doubling)


def r_accum(r):
    b, a = num(r["bigbatch"], "max_allocated"), num(r["accum"], "max_allocated")
    ub, ua = num(r["bigbatch"], "update_norm"), num(r["accum"], "update_norm")
    rel = abs(ub - ua) / ub if ub else 1.0
    return b - a >= 1 * GiB and rel < 1e-3, \
        "peak %.0f vs %.0f MiB; update norm rel. diff %.1e" % (b / MiB, a / MiB, rel)


check("grad_accumulation", ["bigbatch", "accum"], "accumulation: lower peak, same update",
      r_accum)


def r_losses(r):
    g, i = r["graph"], r["item"]
    leak, exp = num(g, "leak_per_step"), num(g, "expected_leak_per_step")
    ok = leak >= 0.9 * exp and leak > 16 * MiB and flat(ints(i, "step_allocated"))
    return ok, "graph +%.1f MiB/step (expected %.1f), item flat=%s" % (
        leak / MiB, exp / MiB, flat(ints(i, "step_allocated")))


check("losses_with_graph", ["graph", "item"], "leak with the graph, none with .item()", r_losses)


def r_outputs(r):
    g, c = r["gpu"], r["cpu"]
    leak, out = num(g, "leak_per_step"), num(g, "output_bytes")
    ok = leak >= 0.95 * out and flat(ints(c, "step_allocated"))
    return ok, "gpu +%.1f MiB/step (one output %.1f MiB), cpu flat=%s" % (
        leak / MiB, out / MiB, flat(ints(c, "step_allocated")))


check("outputs_list_leak", ["gpu", "cpu"], "outputs leak on the GPU, not after .cpu()", r_outputs)


def r_infer(r):
    g, n = num(r["grad"], "max_allocated"), num(r["nograd"], "max_allocated")
    return g >= 2 * n, "%.0f vs %.0f MiB" % (g / MiB, n / MiB)


check("inference_no_grad", ["grad", "nograd"], "peak with grad >= 2 x under no_grad", r_infer)
check("inference_no_grad", ["grad", "nograd"], "same predictions",
      lambda r: (r["grad"]["checksum"] == r["nograd"]["checksum"],
                 "%s vs %s" % (r["grad"]["checksum"], r["nograd"]["checksum"])), fatal=False)


def r_amp(r):
    a, f = r["amp"], r["fp32"]
    pa, pf = num(a, "max_allocated"), num(f, "max_allocated")
    ra, rf = num(a, "fwd_retained"), num(f, "fwd_retained")
    return pa <= 0.8 * pf and ra <= 0.7 * rf, \
        "peak %.0f vs %.0f MiB, forward keeps %.0f vs %.0f MiB (%.0f%%)" % (
            pa / MiB, pf / MiB, ra / MiB, rf / MiB, 100 * ra / rf)


check("amp_vs_fp32", ["amp", "fp32"], "autocast shrinks the activations", r_amp)


def r_frag(r):
    d, e = r["default"], r["expandable"]
    rd, re_ = num(d, "max_reserved"), num(e, "max_reserved")
    gap = num(d, "worst_gap")
    ok = d["backend"] == "native" and e["expandable"] == "1" and rd >= 3 * re_ and gap >= 2 * GiB
    return ok, "max reserved %.0f vs %.0f MiB, default's worst gap %.0f MiB, expandable=%s" % (
        rd / MiB, re_ / MiB, gap / MiB, e["expandable"])


check("fragmentation", ["default", "expandable"],
      "default: reserved >> allocated; expandable segments: not", r_frag)

sys.exit(1 if failed else 0)
EOF

echo "logs: $logdir"
exit "$fail"
