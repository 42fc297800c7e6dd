#!/usr/bin/env bash
# analyze on many cores and on one, on bench/analyze_gen.c traces of each
# mode: a 65 M-event (LONG) trace at THREADS (default 16) threads, three
# runs, and a 5 M-event (SHORT) one on one thread against a BASE build in
# three interleaved pairs; native traces also with two passes forced
# (GPUPROF_TEST_PASSES=2). Each line: wall, user CPU, the reading thread's
# CPU (bench/main_thread_cpu.c) and per event, peak RSS, events a second;
# "JSON DIFFERS" after a run whose output is not BASE's (SHORT) or the
# first run's (LONG).
#
#   [MODES="native tensor"] [THREADS=16] [LONG=65000000] [SHORT=5000000] \
#   bash bench/analyze_cores.sh GPUPROF BASE_GPUPROF [WORKDIR]
#
# WORKDIR (default /dev/shm/gpuprof-cores) keeps the traces, about 1.2 GB a
# mode at the default lengths.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
new=${1:?usage: analyze_cores.sh GPUPROF BASE_GPUPROF [WORKDIR]}
base=${2:?usage: analyze_cores.sh GPUPROF BASE_GPUPROF [WORKDIR]}
w=${3:-/dev/shm/gpuprof-cores}
modes=${MODES:-native tensor}
threads=${THREADS:-16}
long=${LONG:-65000000}
short=${SHORT:-5000000}
mkdir -p "$w"
cc -O2 -o "$w/gen" "$root/bench/analyze_gen.c" -lz || exit 2
cc -O2 -shared -fPIC -o "$w/tcpu.so" "$root/bench/main_thread_cpu.c" || exit 2
echo "$(nproc) CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(date -u +%FT%TZ)"
gen() { # mode length file
	local arg=
	[ "$1" = native ] && arg=native
	[ -s "$3.n" ] || "$w/gen" "$3" "$2" $arg >"$3.n"
}
pids=()
for m in $modes; do
	gen "$m" "$long" "$w/$m-long.json.gz" &
	pids+=($!)
done

run() { # label events gpuprof trace [compare-with]
	local label=$1 n=$2 gp=$3 trace=$4 ref=${5:-}
	if ! /usr/bin/time -f "%e %U %M" env LD_PRELOAD="$w/tcpu.so" "$gp" analyze --json "$trace" \
		>"$w/out.json" 2>"$w/time"; then
		echo "$label FAILED: $(tail -2 "$w/time")"
		return
	fi
	read -r wall user rss <<<"$(tail -1 "$w/time")"
	main=$(awk '/main-thread-cpu/ { print $2; exit }' "$w/time")
	awk -v l="$label" -v w="$wall" -v u="$user" -v m="$rss" -v n="$n" -v mt="$main" 'BEGIN {
		printf "%-26s wall %6.2f s user %6.2f s main %6.2f s (%4.0f ns/ev) rss %5.0f MiB %5.2f M ev/s\n",
			l, w, u, mt, mt * 1e9 / n, m / 1024, n / w / 1e6 }'
	[ -z "$ref" ] || cmp -s "$w/out.json" "$ref" || echo "  JSON DIFFERS"
}

for m in $modes; do
	t=$w/$m-short.json.gz
	gen "$m" "$short" "$t"
	n=$(cat "$t.n")
	echo "$m, short: $n events, $(stat -c %s "$t") bytes"
	run "$m-short base" "$n" "$base" "$t"
	cp "$w/out.json" "$w/base.json"
	for r in 1 2 3; do
		GPUPROF_THREADS=1 run "$m-short T1 r$r" "$n" "$new" "$t" "$w/base.json"
		run "$m-short base r$r" "$n" "$base" "$t"
	done
	[ "$m" = native ] &&
		GPUPROF_TEST_PASSES=2 GPUPROF_THREADS=1 run "$m-short T1 2passes" "$n" "$new" "$t" "$w/base.json"
	GPUPROF_THREADS=$threads run "$m-short T$threads" "$n" "$new" "$t" "$w/base.json"
done
wait "${pids[@]}"
for m in $modes; do
	t=$w/$m-long.json.gz
	n=$(cat "$t.n")
	echo "$m, long: $n events, $(stat -c %s "$t") bytes"
	GPUPROF_THREADS=$threads run "$m-long T$threads r1" "$n" "$new" "$t"
	cp "$w/out.json" "$w/first.json"
	for r in 2 3; do GPUPROF_THREADS=$threads run "$m-long T$threads r$r" "$n" "$new" "$t" "$w/first.json"; done
	[ "$m" = native ] &&
		GPUPROF_TEST_PASSES=2 GPUPROF_THREADS=$threads run "$m-long T$threads 2passes" "$n" "$new" "$t" \
			"$w/first.json"
done
