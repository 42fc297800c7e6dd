#!/usr/bin/env bash
# The flight recorder on GPT-2 small (bench/flight_gpt2.py), one GPU:
#   full     the whole trace, 40 steps: each step's peak, the reference
#   flight   --window 10 --dump-steps 10-12, cudaProfilerStart/Stop around
#            steps 20-22, SIGUSR1 after step 30: the outline's step peaks
#            against the full trace's, each range dump's peak against
#            PyTorch's max_memory_allocated() over the range, the steps'
#            times around the signal
#   oom      --window 10, a request of the whole device at step 20, caught:
#            how long until its dump is whole
#   grow     the batch 8 times larger from step 25 until it runs out, fully
#            traced and under --window 10 --dump-at 40GiB: the failure as
#            each explains it, and the threshold's dump
# Every trace analyzed (NAME.analyze.json); bench/flight_gpt2_cmp.py prints
# the comparison.
#   bash bench/flight_gpt2.sh GPUPROF OUTDIR
set -u
G=$1 OUTD=$2
here=$(cd "$(dirname "$0")" && pwd)
P=$here/flight_gpt2.py
mkdir -p "$OUTD" && cd "$OUTD" || exit 1
run() { # NAME GPUPROF-OPTIONS... -- PROGRAM-OPTIONS...
	local name=$1
	shift
	local gopts=()
	while [ "$1" != -- ]; do gopts+=("$1"); shift; done
	shift
	local t0=$(date +%s%N)
	"$G" --trace -f "${gopts[@]}" -o "$name.json.gz" -- python3 "$P" "$name.res" "$@" > "$name.out" 2>&1
	echo "$name rc=$? wall_ms=$((($(date +%s%N) - t0) / 1000000))"
}
run full -- --steps 40 --range 10-12 --profile 20-22
run flight --window 10 --dump-steps 10-12 -- --steps 40 --range 10-12 --profile 20-22 --usr1 30
DUMP_GLOB="$OUTD/oom.dump*.json.gz" run oom --window 10 -- --steps 26 --oom-at 20
run growfull -- --steps 40 --grow-at 25
run growfl --window 10 --dump-at 40GiB -- --steps 40 --grow-at 25
for f in *.json.gz; do
	n=${f%.json.gz}
	echo "$n: $(stat -c %s "$f") bytes, $(zcat "$f" | grep -c .) lines"
	"$G" analyze --json "$f" > "$n.analyze.json" 2> "$n.analyze.err" || echo "analyze $n failed: $(head -c 300 "$n.analyze.err")"
	"$G" analyze "$f" > "$n.analyze.txt" 2>&1
done
python3 "$here/flight_gpt2_cmp.py" .
