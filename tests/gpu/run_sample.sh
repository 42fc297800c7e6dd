#!/bin/sh
# Runs one sample under gpuprof and checks the trace against what the sample
# says it did.
#
#   run_sample.sh GPUPROF SAMPLE WORKDIR [--python PY] [--expect-rc N] [--allow-recovered] [--callbacks]
#
# --callbacks: record without CUPTI's pool records (GPUPROF_RECORD without
# "pools"), so that allocations and frees come from gpuprof's API
# callbacks (stream-ordered ones from its patched calls), as in PyTorch's
# tensor mode (whose module globals, "statics", a program without training
# steps keeps all run); files and result are named
# <sample>.callbacks.
#
# Exit: 0 pass, 1 fail, 77 no usable GPU here (ctest SKIP_RETURN_CODE).
# Leaves WORKDIR/<sample>.json.gz, .stdout, .stderr and .check for a look.
# With GPUPROF_RESULTS set, appends the checker's RESULT line (or a RESULT ...
# FAIL line saying why there was none) to that file.
set -u

if [ $# -lt 3 ]; then
	echo "usage: $0 GPUPROF SAMPLE WORKDIR [--python PY] [--expect-rc N] [--allow-recovered] [--callbacks]" >&2
	exit 2
fi
GPUPROF=$1
SAMPLE=$2
WORK=$3
shift 3
PY=python3
EXPECT_RC=0
RECOVERED=
CALLBACKS=
while [ $# -gt 0 ]; do
	case $1 in
	--python) PY=$2; shift 2 ;;
	--expect-rc) EXPECT_RC=$2; shift 2 ;;
	--allow-recovered) RECOVERED=--allow-recovered; shift ;;
	--callbacks) CALLBACKS=--callbacks; shift ;;
	*) echo "$0: unknown argument $1" >&2; exit 2 ;;
	esac
done
HERE=$(cd "$(dirname "$0")" && pwd)

# A usable GPU: the driver's control node and at least one GPU listed.
if [ ! -e /dev/nvidiactl ]; then
	echo "SKIP: /dev/nvidiactl is missing (no NVIDIA driver)"
	exit 77
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
	echo "SKIP: nvidia-smi not found"
	exit 77
fi
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
	echo "SKIP: nvidia-smi -L lists no GPU"
	exit 77
fi

for f in "$GPUPROF" "$SAMPLE"; do
	if [ ! -x "$f" ]; then
		echo "FAIL: $f is not an executable"
		exit 1
	fi
done

name=$(basename "$SAMPLE")${CALLBACKS:+.callbacks}
mkdir -p "$WORK" || exit 1
trace=$WORK/$name.json.gz
out=$WORK/$name.stdout
err=$WORK/$name.stderr
rm -f "$trace" "$out" "$err" "$WORK/$name.check"

if [ -n "$CALLBACKS" ]; then
	GPUPROF_RECORD=memory,kernels,copies,api,launches,oom,nvtx,statics
	export GPUPROF_RECORD
fi
echo "running: ${GPUPROF_RECORD:+GPUPROF_RECORD=$GPUPROF_RECORD }$GPUPROF --trace -o $trace --force -- $SAMPLE"
"$GPUPROF" --trace -o "$trace" --force -- "$SAMPLE" >"$out" 2>"$err"
rc=$?
echo "gpuprof exit status $rc (expected $EXPECT_RC)"

result() {
	if [ -n "${GPUPROF_RESULTS:-}" ]; then
		printf '%s\n' "$*" >>"$GPUPROF_RESULTS"
	fi
}

show_logs() {
	echo "---- $out (last 20 lines)"
	tail -n 20 "$out"
	echo "---- $err (last 40 lines)"
	tail -n 40 "$err"
}

if [ "$rc" -ne "$EXPECT_RC" ]; then
	echo "FAIL: gpuprof exited with $rc, expected $EXPECT_RC"
	result "RESULT $name FAIL gpuprof_exit=$rc expected_exit=$EXPECT_RC"
	show_logs
	exit 1
fi
if [ ! -s "$trace" ]; then
	echo "FAIL: no trace at $trace"
	result "RESULT $name FAIL no_trace"
	show_logs
	exit 1
fi

"$PY" "$HERE/check_trace.py" "$trace" "$out" $RECOVERED $CALLBACKS >"$WORK/$name.check" 2>&1
crc=$?
cat "$WORK/$name.check"
line=$(grep '^RESULT ' "$WORK/$name.check" | tail -n 1)
result "${line:-RESULT $name FAIL checker_status=$crc}"
if [ "$crc" -ne 0 ]; then
	show_logs
	echo "FAIL: check_trace.py exited with $crc (trace kept at $trace)"
	exit 1
fi
exit 0
