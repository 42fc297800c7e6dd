#!/usr/bin/env bash
# Says whether two builds of gpuprof analyze every trace the same: the text
# and JSON reports (stdout, stderr and exit status) of each trace under
# samples/traces and tests/data, of each run directory there, of every
# scenario of tests/analyze/synth.py, and of bench/analyze_gen.c traces
# (tensor and native mode), the new build on 1 and 2 reader threads. For changes that must not change
# any output (speed work); prints each difference, exits 1 if any.
#
#   bash bench/analyze_same.sh NEW_GPUPROF BASE_GPUPROF [GEN_EVENTS...]
#
# GEN_EVENTS default to "20000 300000".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
new=${1:?usage: analyze_same.sh NEW_GPUPROF BASE_GPUPROF [GEN_EVENTS...]}
base=${2:?usage: analyze_same.sh NEW_GPUPROF BASE_GPUPROF [GEN_EVENTS...]}
shift 2
sizes=${*:-20000 300000}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-same.XXXXXX")
trap 'rm -rf "$work"' EXIT

cc -O2 -o "$work/gen" "$root/bench/analyze_gen.c" -lz || exit 2
mkdir -p "$work/synth"
for s in $(grep -o 'name == "[a-z_0-9]*"' "$root/tests/analyze/synth.py" | cut -d'"' -f2); do
	mkdir -p "$work/synth/$s"
	python3 "$root/tests/analyze/synth.py" "$s" "$work/synth/$s" >/dev/null || exit 2
done
for n in $sizes; do
	"$work/gen" "$work/gen$n.json.gz" "$n" >/dev/null || exit 2
	"$work/gen" "$work/nat$n.json.gz" "$n" native >/dev/null || exit 2
done

# each case: one line of arguments (traces), relative to $root or absolute
{
	find "$root/samples/traces" "$root/tests/data" -name '*.json.gz' | sort
	find "$root/tests/data" -mindepth 1 -type d | sort
	for d in "$work"/synth/*; do
		echo "$(find "$d" -name '*.json.gz' | sort | tr '\n' ' ')"
	done
	for n in $sizes; do echo "$work/gen$n.json.gz"; echo "$work/nat$n.json.gz"; done
} >"$work/cases"

bad=0 cases=0
run() { # out-prefix gpuprof threads args...
	local o=$1 gp=$2 t=$3
	shift 3
	GPUPROF_THREADS=$t "$gp" analyze "$@" >"$o.out" 2>"$o.err"
	echo $? >"$o.rc"
	sed -i "s|$work|WORK|g; s|$root|ROOT|g" "$o.err"
}
while read -r line; do
	[ -n "$line" ] || continue
	for fmt in text json; do
		flag=()
		[ "$fmt" = json ] && flag=(--json)
		# shellcheck disable=SC2086 # a case is several paths
		run "$work/b" "$base" 1 "${flag[@]}" $line
		for t in 1 2; do
			# shellcheck disable=SC2086
			run "$work/n" "$new" "$t" "${flag[@]}" $line
			cases=$((cases + 1))
			for part in out err rc; do
				if ! cmp -s "$work/b.$part" "$work/n.$part"; then
					echo "DIFFERENT ($fmt, $t threads, $part): ${line//$work/WORK}"
					diff "$work/b.$part" "$work/n.$part" | head -5
					bad=1
				fi
			done
		done
	done
done <"$work/cases"
echo "$cases runs compared: $([ $bad = 0 ] && echo all the same || echo DIFFERENCES)"
exit $bad
