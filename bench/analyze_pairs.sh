#!/usr/bin/env bash
# One thread against BASE, run side by side: each round starts a GPUPROF
# and a BASE run at once on two cores of their own, so that both meet the
# same moment of a noisy host, and takes the ratio of their CPU times (user
# + system). PAIRS pairs run at once on distinct physical cores (one logical
# CPU of each core; the two of a pair swap cores every round). Prints each
# pair and the median ratio with its range.
#
#   [ROUNDS=5] [PAIRS=1] bash bench/analyze_pairs.sh GPUPROF BASE_GPUPROF TRACE
#
# GPUPROF runs with GPUPROF_THREADS=1; BASE as it is (09c6712 had one
# thread). "JSON DIFFERS" after a pair whose outputs differ.
set -u
new=${1:?usage: analyze_pairs.sh GPUPROF BASE_GPUPROF TRACE}
base=${2:?usage: analyze_pairs.sh GPUPROF BASE_GPUPROF TRACE}
trace=${3:?usage: analyze_pairs.sh GPUPROF BASE_GPUPROF TRACE}
rounds=${ROUNDS:-5}
pairs=${PAIRS:-1}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
# one logical CPU a physical core, SMT siblings would share its pipeline
mapfile -t cpus < <(for d in /sys/devices/system/cpu/cpu[0-9]*; do
	[ -r "$d/topology/core_id" ] || continue
	echo "$(cat "$d/topology/physical_package_id" 2>/dev/null || echo 0)-$(cat "$d/topology/core_id") ${d##*cpu}"
done | sort -u -k1,1 | awk '{ print $2 }' | sort -n)
[ "${#cpus[@]}" -ge 2 ] || cpus=(0 1)
if [ $((pairs * 2)) -gt "${#cpus[@]}" ]; then
	pairs=$((${#cpus[@]} / 2))
fi
echo "$(nproc) CPUs (${#cpus[@]} cores),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(date -u +%FT%TZ)"
echo "$trace; $rounds rounds of $pairs pairs at once"
one() { # label cpu gpuprof [env...]
	local l=$1 cpu=$2 gp=$3
	shift 3
	/usr/bin/time -o "$w/t$l" -f "%U %S" env "$@" taskset -c "$cpu" "$gp" analyze --json "$trace" \
		>"$w/$l.json" 2>"$w/$l.err"
}
for r in $(seq "$rounds"); do
	pids=()
	for p in $(seq 0 $((pairs - 1))); do
		a=${cpus[$((2 * p))]} b=${cpus[$((2 * p + 1))]}
		[ $((r % 2)) = 0 ] && { t=$a; a=$b; b=$t; }
		one "n$p" "$a" "$new" GPUPROF_THREADS=1 &
		pids+=($!)
		one "b$p" "$b" "$base" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for p in $(seq 0 $((pairs - 1))); do
		if [ ! -s "$w/tn$p" ] || [ ! -s "$w/tb$p" ] || grep -q . "$w/n$p.err" "$w/b$p.err"; then
			echo "round $r pair $p FAILED: $(cat "$w/n$p.err" "$w/b$p.err" | tail -2)"
			continue
		fi
		tn=$(awk '{ print $1 + $2 }' "$w/tn$p")
		tb=$(awk '{ print $1 + $2 }' "$w/tb$p")
		awk -v r="$r" -v p="$p" -v n="$tn" -v b="$tb" 'BEGIN {
			printf "round %2d pair %2d  new %6.2f s  base %6.2f s  %.3fx\n", r, p, n, b, b / n }'
		cmp -s "$w/n$p.json" "$w/b$p.json" || echo "  JSON DIFFERS"
		rm -f "$w/tn$p" "$w/tb$p"
	done
done | tee "$w/rounds"
awk '/^round/ && !/FAILED/ { sub("x", "", $NF); print $NF }' "$w/rounds" | sort -n |
	awk '{ r[NR] = $1 } END { if (NR) printf "median %.3fx (range %.3f-%.3f, %d pairs)\n", r[int((NR + 1) / 2)], r[1], r[NR], NR }'
