#!/usr/bin/env bash
# What reading a capped trace costs: `gpuprof analyze --json` and `gpuprof
# report` of a 1 GiB trace (bench/analyze_gen.c, LONG events, the default
# trace cap's size) in each mode, at the default threads and at THREADS,
# ROUNDS rounds, the configurations interleaved in each. Each line: wall,
# user CPU, peak RSS, events a second, the page's size for report.
#
#   [MODES="native tensor"] [THREADS=16] [LONG=65000000] [ROUNDS=3] \
#   bash bench/read_budget.sh GPUPROF [WORKDIR]
#
# WORKDIR (default /dev/shm/gpuprof-read) keeps the traces, about 1.2 GB a
# mode at the default length (bench/analyze_cores.sh makes the same ones).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
gp=${1:?usage: read_budget.sh GPUPROF [WORKDIR]}
w=${2:-/dev/shm/gpuprof-read}
modes=${MODES:-native tensor}
threads=${THREADS:-16}
long=${LONG:-65000000}
rounds=${ROUNDS:-3}
mkdir -p "$w"
cc -O2 -o "$w/gen" "$root/bench/analyze_gen.c" -lz || exit 2
echo "$(nproc) CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(date -u +%FT%TZ)"
pids=()
for m in $modes; do
	arg=
	[ "$m" = native ] && arg=native
	t=$w/$m-long.json.gz
	[ -s "$t.n" ] || { "$w/gen" "$t" "$long" $arg >"$t.n" & pids+=($!); }
done
wait "${pids[@]}"

run() { # label events threads command...
	local label=$1 n=$2 th=$3
	shift 3
	if ! /usr/bin/time -f "%e %U %M" env ${th:+GPUPROF_THREADS=$th} "$@" >/dev/null 2>"$w/time"; then
		echo "$label FAILED: $(tail -2 "$w/time")"
		return
	fi
	read -r wall user rss <<<"$(tail -1 "$w/time")"
	awk -v l="$label" -v w="$wall" -v u="$user" -v m="$rss" -v n="$n" 'BEGIN {
		printf "%-30s wall %6.2f s user %6.2f s rss %5.0f MiB %5.2f M ev/s",
			l, w, u, m / 1024, n / w / 1e6 }'
	[ -s "$w/page.html" ] && printf " page %s bytes" "$(stat -c %s "$w/page.html")"
	echo
	rm -f "$w/page.html"
}

for m in $modes; do
	t=$w/$m-long.json.gz
	n=$(cat "$t.n")
	echo "$m: $n events, $(stat -c %s "$t") bytes"
	for r in $(seq "$rounds"); do
		for th in "" "$threads"; do
			run "$m analyze T${th:-default} r$r" "$n" "$th" "$gp" analyze --json "$t"
			run "$m report T${th:-default} r$r" "$n" "$th" "$gp" report "$t" -o "$w/page.html" --force
		done
	done
done
