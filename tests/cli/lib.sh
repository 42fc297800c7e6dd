# Sourced by every test_*.sh: sh test_X.sh GPUPROF FAKE_RECORDER [PYTHON]
# Runs the test in a fresh directory (removed at exit) with an environment
# that does not depend on the machine: no inherited injection variables, and
# the stand-in recorder so that a run always records (see fake_recorder.c).
set -u
GPUPROF=$1
FAKE_RECORDER=$2
PYTHON=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd -P)

unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH GPUPROF_OUTPUT \
	GPUPROF_ROOT_PID GPUPROF_PYTHON POSIXLY_CORRECT
GPUPROF_INJECT_LIB=$FAKE_RECORDER
export GPUPROF_INJECT_LIB

TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-cli.XXXXXX") || exit 1
trap 'cd /; rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
TMP=$(pwd -P) # the launcher reports resolved paths
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# gp ARGS...: runs gpuprof; its status in $rc, stdout in ./out, stderr in ./err
gp() {
	"$GPUPROF" "$@" >out 2>err
	rc=$?
}

# gp_in INPUT ARGS...: the same with stdin from the file INPUT
gp_in() {
	_in=$1
	shift
	"$GPUPROF" "$@" <"$_in" >out 2>err
	rc=$?
}

show() {
	printf '  %s: ' "$1"
	if [ -s "$1" ]; then echo; sed 's/^/    | /' "$1"; else echo '(empty)'; fi
}

# check_rc EXPECTED WHAT
check_rc() {
	if [ "$rc" -ne "$1" ]; then
		fail "$2: exit status $rc, expected $1"
		show out >&2
		show err >&2
	fi
}

# check_err TEXT WHAT: stderr holds TEXT (a fixed string)
check_err() {
	grep -qF -- "$1" err || { fail "$2: stderr lacks \"$1\""; show err >&2; }
}

# check_no_err TEXT WHAT
check_no_err() {
	! grep -qF -- "$1" err || { fail "$2: stderr has \"$1\""; show err >&2; }
}

# check_out TEXT WHAT: stdout is exactly TEXT plus a newline
check_out() {
	printf '%s\n' "$1" >expected
	cmp -s expected out || { fail "$2: stdout is not \"$1\""; show out >&2; }
}

check_no_stdout() {
	[ ! -s out ] || { fail "$1: gpuprof wrote to stdout"; show out >&2; }
}

# check_prefixed WHAT: every stderr line is gpuprof's own
check_prefixed() {
	if grep -Eqv -e '^gpuprof: ' -e "^Try 'gpuprof ([a-z]+ )?--help'.\$" err; then
		fail "$1: stderr line without the gpuprof: prefix"
		show err >&2
	fi
}

# line_of KEY FILE: the value of KEY=value in FILE
line_of() {
	sed -n "s/^$1=//p" "$2"
}

have_driver() {
	ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '
}

need_python() {
	if [ -z "$PYTHON" ] || ! "$PYTHON" -c 'import gzip, json' 2>/dev/null; then
		echo "SKIP: no python3 with gzip and json" >&2
		exit 77
	fi
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed" >&2
		exit 1
	fi
	echo "all checks passed"
	exit 0
}
