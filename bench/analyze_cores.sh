#!/usr/bin/env bash
# analyze on many cores and on one, tensor-mode and native-mode traces of
# bench/analyze_gen.c: a 65 M-event (LONG) native trace at THREADS (default 16)
# threads read once (the default) and in two passes (GPUPROF_TEST_PASSES=2),
# the tensor trace of that length beside it, and a 5 M-event (SHORT) native trace on one
# thread against a BASE build, interleaved. Each line: wall, user CPU, the
# reading thread's CPU (bench/main_thread_cpu.c) and per event, peak RSS,
# events a second; "JSON DIFFERS" after a run whose output is not BASE's
# (SHORT) or the one pass's (LONG).
#
#   [THREADS=16] [LONG=65000000] [SHORT=5000000] \
#   bash bench/analyze_cores.sh GPUPROF BASE_GPUPROF [WORKDIR]
#
# WORKDIR (default /dev/shm/gpuprof-cores) keeps the traces, about 2.4 GB
# at the default lengths.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
new=${1:?usage: analyze_cores.sh GPUPROF BASE_GPUPROF [WORKDIR]}
base=${2:?usage: analyze_cores.sh GPUPROF BASE_GPUPROF [WORKDIR]}
w=${3:-/dev/shm/gpuprof-cores}
threads=${THREADS:-16}
long=${LONG:-65000000}
short=${SHORT:-5000000}
mkdir -p "$w"
cc -O2 -o "$w/gen" "$root/bench/analyze_gen.c" -lz || exit 2
cc -O2 -shared -fPIC -o "$w/tcpu.so" "$root/bench/main_thread_cpu.c" || exit 2
echo "$(nproc) CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(date -u +%FT%TZ)"
[ -s "$w/nt65" ] || ("$w/gen" "$w/t65.json.gz" "$long" >"$w/nt65") &
gen_tensor=$!
[ -s "$w/nn65" ] || ("$w/gen" "$w/n65.json.gz" "$long" native >"$w/nn65") &
gen_native=$!
[ -s "$w/nn5" ] || "$w/gen" "$w/n5.json.gz" "$short" native >"$w/nn5"

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
		printf "%-24s wall %6.2f s user %6.2f s main %6.2f s (%4.0f ns/ev) rss %5.0f MiB %5.2f M ev/s\n",
			l, w, u, mt, mt * 1e9 / n, m / 1024, n / w / 1e6 }'
	[ -z "$ref" ] || cmp -s "$w/out.json" "$ref" || echo "  JSON DIFFERS"
}

n5=$(cat "$w/nn5")
echo "native, short: $n5 events, $(stat -c %s "$w/n5.json.gz") bytes"
run "5M-nat base" "$n5" "$base" "$w/n5.json.gz"
cp "$w/out.json" "$w/base5.json"
for r in 1 2 3; do
	GPUPROF_THREADS=1 run "5M-nat T1 r$r" "$n5" "$new" "$w/n5.json.gz" "$w/base5.json"
	run "5M-nat base r$r" "$n5" "$base" "$w/n5.json.gz"
done
GPUPROF_TEST_PASSES=2 GPUPROF_THREADS=1 run "5M-nat T1 2passes" "$n5" "$new" "$w/n5.json.gz" "$w/base5.json"
GPUPROF_THREADS=$threads run "5M-nat T$threads" "$n5" "$new" "$w/n5.json.gz" "$w/base5.json"
wait $gen_native
n65=$(cat "$w/nn65")
echo "native, long: $n65 events, $(stat -c %s "$w/n65.json.gz") bytes"
for r in 1 2 3; do GPUPROF_THREADS=$threads run "65M-nat T$threads r$r" "$n65" "$new" "$w/n65.json.gz"; done
cp "$w/out.json" "$w/one65.json"
GPUPROF_TEST_PASSES=2 GPUPROF_THREADS=$threads run "65M-nat T$threads 2passes" "$n65" "$new" "$w/n65.json.gz" \
	"$w/one65.json"
wait $gen_tensor
nt=$(cat "$w/nt65")
echo "tensor, long: $nt events, $(stat -c %s "$w/t65.json.gz") bytes"
for r in 1 2; do GPUPROF_THREADS=$threads run "65M-ten T$threads r$r" "$nt" "$new" "$w/t65.json.gz"; done
GPUPROF_THREADS=$threads run "65M-nat T$threads r4" "$n65" "$new" "$w/n65.json.gz"
