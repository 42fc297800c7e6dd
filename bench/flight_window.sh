#!/usr/bin/env bash
# The flight recorder against the full trace, on one GPU: the same job
# (bench/flight_window.py: 120 steps, 16 MiB leaked a step, PyTorch's own
# peak over its last 5 steps) run plain, fully traced, under --window 3
# (a SIGUSR1 dump halfway, the end's dump) and under --window 3 ending in
# an out-of-memory error; every trace analyzed, the peaks printed beside
# the program's own.
#   bash bench/flight_window.sh GPUPROF OUTDIR [STEPS]
set -u
G=$1 OUTD=$2 N=${3:-120}
P=$(cd "$(dirname "$0")" && pwd)/flight_window.py
C=$(cd "$(dirname "$0")" && pwd)/flight_window_cmp.py
mkdir -p "$OUTD" && cd "$OUTD" || exit 1
python3 "$P" "$N" plain.json; echo "plain rc=$?"
"$G" --trace -f -o full.json.gz -- python3 "$P" "$N" full.json > full.out 2>&1; echo "full rc=$?"
"$G" --trace -f --window 3 -o win.json.gz -- python3 "$P" "$N" win.json > win.out 2>&1; echo "win rc=$?"
"$G" --trace -f --window 3 -o oom.json.gz -- python3 "$P" "$N" oom.json oom > oom.out 2>&1; echo "oom rc=$?"
for f in full win win.dump1 oom oom.dump1 oom.dump2; do
	[ -f $f.json.gz ] || continue
	echo "$f: $(stat -c %s $f.json.gz) bytes, $(zcat $f.json.gz | grep -c .) lines"
	"$G" analyze --json $f.json.gz > $f.analyze.json 2> $f.analyze.err || echo "analyze $f failed"
	"$G" analyze $f.json.gz > $f.analyze.txt 2>&1
done
python3 "$C" .
