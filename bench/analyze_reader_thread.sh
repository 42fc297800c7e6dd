#!/usr/bin/env bash
# What bounds `gpuprof analyze` on many cores: the CPU time of its reading
# thread (the one that analyzes, in file order, what the reader's workers
# inflated, scanned and decoded), per event. Sampled with perf at 1 kHz:
# the thread whose id is the process's is the reading thread, every other
# one a worker. Rounds alternate the builds given; each line: build,
# round, wall seconds, reading thread ms, workers ms, ns an event on the
# reading thread (its ceiling in events per second: 1e3 / that).
#
#   [THREADS=4] [ROUNDS=5] bash bench/analyze_reader_thread.sh EVENTS GPUPROF [GPUPROF...]
#
# Needs perf (linux-perf) and kernel.perf_event_paranoid <= 2.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
events=${1:?usage: analyze_reader_thread.sh EVENTS GPUPROF [GPUPROF...]}
shift
[ $# -ge 1 ] || { echo "usage: analyze_reader_thread.sh EVENTS GPUPROF [GPUPROF...]" >&2; exit 2; }
command -v perf >/dev/null || { echo "analyze_reader_thread.sh: needs perf" >&2; exit 2; }
threads=${THREADS:-4}
rounds=${ROUNDS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-reader.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/gen" "$root/bench/analyze_gen.c" -lz
n=$("$work/gen" "$work/t.json.gz" "$events")
echo "trace: $n events, $(stat -c %s "$work/t.json.gz") bytes; GPUPROF_THREADS=$threads; $(nproc) CPUs"
printf '%-40s %5s %8s %10s %10s %10s\n' build round wall_s reading_ms workers_ms ns/event
for r in $(seq "$rounds"); do
	for gp in "$@"; do
		start=$(date +%s.%N)
		GPUPROF_THREADS=$threads perf record -q -F 1000 -o "$work/p.data" \
			"$gp" analyze --json "$work/t.json.gz" >/dev/null 2>"$work/err"
		end=$(date +%s.%N)
		perf report -i "$work/p.data" --no-children --sort pid --stdio -F sample,pid 2>/dev/null |
			awk -v gp="$gp" -v r="$r" -v n="$n" -v w="$(echo "$end - $start" | bc)" '
			/^ +[0-9]/ { split($2, a, ":"); s[a[1]] = $1 }
			END { first = ""; for (p in s) if (first == "" || p + 0 < first + 0) first = p
			      for (p in s) if (p != first) wk += s[p]
			      printf "%-40s %5d %8.2f %10d %10d %10.0f\n", gp, r, w, s[first], wk, s[first] * 1e6 / n }'
	done
done
