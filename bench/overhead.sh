#!/usr/bin/env bash
# What gpuprof costs a GPT-2 small training step (tests/torch/train_models.py),
# against the same program unprofiled with the same allocator (the default
# allocator's where no plain run of its own allocator was asked for). Runs
# each configuration in its own process, alternating, ROUNDS times, and
# prints the median step (median over rounds of each run's median), the host
# time to queue a step (and its forward, backward and optimizer step) and
# the main thread's CPU time per step until then.
#   bench/overhead.sh GPUPROF OUTDIR [CONFIG...]
# CONFIG: name=mode[+ENV=VALUE...], mode one of plain-native, plain-tensor
# (PyTorch's cudaMallocAsync backend), cuda, native, tensor, and
# torchprof-native, torchprof-tensor (no gpuprof: torch.profiler with
# profile_memory over the timed steps, the budget's reference; its JSON's
# size is printed and the file deleted), history-native (no gpuprof:
# PyTorch's own memory recorder, _record_memory_history with Python stacks,
# on from before the warmup, train_models.py --memory-history, the budget's
# reference for --stacks; its pickled snapshot's size is printed), and
# bare-native, bare-tensor (no gpuprof: bench/bare_cupti.c, a CUPTI
# subscriber that only counts records, the floor under any CUPTI tracer;
# BARE_CUPTI names the library, by default beside GPUPROF's build,
# BARE_CUPTI_KINDS its kinds). ENV=VALUE goes into the environment of gpuprof
# (the gpuprof modes) or of the program; e.g.
#   base=plain-native  cuda=cuda  cuda-memonly=cuda+GPUPROF_RECORD=memory
#   stacks=native+GPUPROF_STACKS=1   (native mode with --stacks)
# The budget (bench/pool_overhead.py --against plain --budget):
#   ROUNDS=10 bench/overhead.sh GPUPROF OUTDIR plain=plain-native native=native \
#     stacks=native+GPUPROF_STACKS=1 tensor=tensor torchprof=torchprof-native \
#     history=history-native
# Environment: ROUNDS (2), STEPS (25), MODEL (gpt2), THREADS (1: after the
# table, each run's step and what each of its threads did, train_models.py
# --threads), PIPELINED (1: steps not waited for one by one,
# train_models.py --pipelined), PIN (a CPU list: every run under taskset -c,
# so that runs differ in what they run, not in where the VM placed them).
# Each run's steal time (the hypervisor running someone else on our vCPUs,
# /proc/stat) is printed after the table.
set -u
gp=$1 out=$2
shift 2
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
tm=$here/tests/torch/train_models.py
rounds=${ROUNDS:-2} steps=${STEPS:-25} model=${MODEL:-gpt2}
extra=()
[ "${THREADS:-0}" = 1 ] && extra+=(--threads)
[ "${PIPELINED:-0}" = 1 ] && extra+=(--pipelined)
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
steal() { awk '$1 == "cpu" { print $9 + 0 }' /proc/stat; }
bare=${BARE_CUPTI:-$(dirname "$gp")/../tests/bench/libbare_cupti.so}
case " $* " in *=bare-*)
	# CUDA ignores an injection path that names no file: it would time plain
	[ -f "$bare" ] || { echo "overhead.sh: no $bare (BARE_CUPTI)" >&2; exit 2; } ;;
esac
[ $# -gt 0 ] || set -- plain=plain-native cuda=cuda native=native plain-async=plain-tensor tensor=tensor
res=$out/overhead.txt
: >"$res"
for r in $(seq "$rounds"); do
	for c in "$@"; do
		name=${c%%=*} spec=${c#*=}
		mode=${spec%%+*} envs=()
		[ "$mode" != "$spec" ] && IFS=+ read -r -a envs <<<"${spec#*+}"
		# the configurations without gpuprof set the allocator themselves
		conf=
		[ "${mode##*-}" = tensor ] && conf=backend:cudaMallocAsync
		no_gp=(env "${envs[@]}" PYTORCH_CUDA_ALLOC_CONF=$conf)
		case $mode in
		plain-native | plain-tensor) cmd=("${no_gp[@]}" python3 "$tm") ;;
		bare-native | bare-tensor) cmd=("${no_gp[@]}" CUDA_INJECTION64_PATH="$bare" python3 "$tm") ;;
		torchprof-native | torchprof-tensor) cmd=("${no_gp[@]}" python3 "$tm" --torch-profiler "$out/$name.json") ;;
		# cudaMallocAsync keeps no history: no history-tensor
		history-native) cmd=("${no_gp[@]}" python3 "$tm" --memory-history) ;;
		*) cmd=(env "${envs[@]}" "$gp" --trace --force --mode "$mode" -o "$out/$name.json.gz" "$tm") ;;
		esac
		s0=$(steal) t0=$(date +%s)
		"${pin[@]}" "${cmd[@]}" --model "$model" --steps "$steps" "${extra[@]}" 2>>"$out/$name.err" |
			sed -n -e "s/^GPUPROF_TORCH /OVERHEAD config=$name round=$r /p" \
				-e "s/^GPUPROF_THREADS /THREADS config=$name round=$r /p" >>"$res"
		echo "STEAL config=$name round=$r ticks=$(($(steal) - s0)) wall_s=$(($(date +%s) - t0))" >>"$res"
		rm -f "$out/$name.json"
	done
done
python3 - "$res" "$@" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(lambda: collections.defaultdict(list))
by_round = collections.defaultdict(dict)  # config -> round -> median_ms
threads = []
steal = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tag, *words = line.split()
    d = dict(w.split("=", 1) for w in words if "=" in w)
    if tag == "STEAL":
        steal[d["config"]].append(d["ticks"])
        continue
    if tag == "THREADS":
        threads.append(d)
        continue
    for k in ("median_ms", "enqueue_ms", "cpu_ms", "fwd_ms", "bwd_ms", "opt_ms",
              "torch_profiler_bytes", "memory_history_bytes"):
        if k in d:
            runs[d["config"]][k].append(float(d[k]))
    by_round[d["config"]][d["round"]] = float(d["median_ms"])
names = [c.split("=", 1)[0] for c in sys.argv[2:]]
base = {}
for n, c in zip(names, sys.argv[2:]):
    mode = c.split("=", 1)[1].split("+")[0]
    if mode.startswith("plain"):
        base["tensor" if mode == "plain-tensor" else "native"] = n
for n, c in zip(names, sys.argv[2:]):
    r = runs.get(n)
    if not r:
        print("overhead %-14s no result (see %s.err)" % (n, n))
        continue
    mode = c.split("=", 1)[1].split("+")[0]
    m = statistics.median(r["median_ms"])
    own = base.get("tensor" if mode.split("-")[-1] == "tensor" else "native")
    # tensor mode's budget is against the user's own (default) allocator
    bn = own or base.get("native", "")
    b = runs.get(bn, {})
    rel = ""
    if b and not mode.startswith("plain"):
        bm = statistics.median(b["median_ms"])
        # each round against its own plain run: drift between rounds cancels
        pr = [(by_round[n][k] / by_round[bn][k] - 1) * 100 for k in by_round[n] if k in by_round[bn]]
        rel = " %+.1f%% (per round: median %+.1f%%, %s)%s" % (
            (m / bm - 1) * 100, statistics.median(pr), " ".join("%+.1f" % x for x in pr),
            "" if own else " against " + bn)
    split = ""
    if r.get("fwd_ms"):  # host time to queue each part of the step
        split = " (fwd %.1f bwd %.1f opt %.1f)" % tuple(
            statistics.median(r[k]) for k in ("fwd_ms", "bwd_ms", "opt_ms"))
    size = ""
    if r.get("torch_profiler_bytes"):
        size = " torch.profiler JSON %.0f MB" % (statistics.median(r["torch_profiler_bytes"]) / 1e6)
    if r.get("memory_history_bytes"):
        size += " memory history %.0f MB" % (statistics.median(r["memory_history_bytes"]) / 1e6)
    print("overhead %-14s step %.2f ms%s (runs %s) queue %.1f ms%s cpu %.1f ms%s" % (
        n, m, rel, " ".join("%.2f" % x for x in r["median_ms"]),
        statistics.median(r["enqueue_ms"]), split, statistics.median(r["cpu_ms"]), size))
for n in names:  # clock ticks (USER_HZ) summed over the vCPUs, run by run
    if steal.get(n):
        print("steal %-14s ticks per run %s" % (n, " ".join(steal[n])))
for d in threads:  # config=, round=, main=, other=
    print("threads %-14s round %s step %.2f ms main %s other %s" % (
        d["config"], d["round"], by_round[d["config"]].get(d["round"], 0.0), d["main"],
        d.get("other", "")))
PY
