#!/usr/bin/env bash
# Speed and memory of `gpuprof analyze` on synthetic tensor-mode traces
# (bench/analyze_gen.c) of two lengths: events per second and peak RSS,
# which must not grow with the trace's length, for each thread count (the
# reader inflates a trace's flushed chunks on GPUPROF_THREADS threads; 1:
# all on one). For scale, the time zlib alone takes to inflate the same
# file, and Python's json.load on the shorter trace. With BASELINE set to
# another gpuprof (an older build), it is timed beside, on the same files.
#
#   [THREADS="1 2 16"] [BASELINE=GPUPROF] bash bench/analyze_speed.sh [GPUPROF] [EVENTS_SHORT] [EVENTS_LONG]
#
# THREADS defaults to "1 N" (N: the online CPUs). GPUPROF defaults to
# build/bench/viewer/gpuprof, built here (RelWithDebInfo, as CI builds it)
# when missing. Each timing is the best of 3 runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gp=${1:-}
short=${2:-1000000}
long=${3:-5000000}
threads=${THREADS:-"1 $(nproc)"}
baseline=${BASELINE:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -z "$gp" ]; then
	gp=$root/build/bench/viewer/gpuprof
	if [ ! -x "$gp" ]; then
		cmake -S "$root" -B "$root/build/bench" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
			-DGPUPROF_BUILD_SAMPLES=OFF >/dev/null
		cmake --build "$root/build/bench" --target gpuprof -j"$(nproc)" >/dev/null
	fi
fi
cc -O2 -o "$work/gen" "$root/bench/analyze_gen.c" -lz
cat >"$work/inflate.c" <<'EOC'
#include <zlib.h>
int main(int c, char **v) { static char b[1 << 20]; gzFile g = gzopen(v[1], "rb");
  (void)c; gzbuffer(g, 1 << 18); while (gzread(g, b, sizeof b) > 0) ; return 0; }
EOC
cc -O2 -o "$work/inflate" "$work/inflate.c" -lz

best() { # best of 3: "wall user maxrss_kib"
	for _ in 1 2 3; do /usr/bin/time -f "%e %U %M" "$@" 2>&1 >/dev/null | tail -1; done | sort -n | head -1
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "gpuprof: $gp${baseline:+; baseline: $baseline}"
printf '%-9s %-10s %8s %8s %9s %12s %9s %9s\n' build events "file MiB" threads "time s" "events/s" "RSS MiB" "zlib s"
for n in "$short" "$long"; do
	f=$work/t$n.json.gz
	events=$("$work/gen" "$f" "$n")
	read -r zwall _ _ <<<"$(best "$work/inflate" "$f")"
	for build in gpuprof ${baseline:+baseline}; do
		bin=$gp
		[ "$build" = baseline ] && bin=$baseline
		for t in $threads; do
			read -r wall _ rss <<<"$(GPUPROF_THREADS=$t best "$bin" analyze --json "$f")"
			awk -v b="$build" -v n="$events" -v t="$t" -v w="$wall" -v r="$rss" -v z="$zwall" \
				-v s="$(stat -c %s "$f")" 'BEGIN {
				printf "%-9s %-10d %8.1f %8d %9.2f %12.0f %9.1f %9.2f\n", b, n, s / 1048576, t, w,
				       n / w, r / 1024, z }'
			[ "$build" = baseline ] && break # one thread whatever it is told
		done
	done
done
if command -v python3 >/dev/null; then
	f=$work/t$short.json.gz
	t=$(best python3 -c 'import gzip, json, sys; json.load(gzip.open(sys.argv[1], "rt"))' "$f")
	awk -v n="$short" -v t="${t%% *}" 'BEGIN { printf "python3 json.load of the %d-event trace: %.2f s, %.0f events/s\n", n, t, n / t }'
fi
