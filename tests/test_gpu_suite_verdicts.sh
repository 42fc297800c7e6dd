# The GPU suite's verdicts (tests/gpu_suite_verdicts.sh) on made-up results,
# for any machine: a failed check makes the exit status 1, skipped tests are
# counted and say why, nothing checked is a failure.
#   sh test_gpu_suite_verdicts.sh
set -u
lib=$(cd "$(dirname "$0")" && pwd)/gpu_suite_verdicts.sh
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-verdicts.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# run_suite NAME: runs the commands of $TMP/NAME.sh with the library, as the
# suite does (verdicts, then summary); its status in $rc, its table in $TMP/NAME.table
run_suite() {
	table=$TMP/$1.table verdicts=$TMP/$1.verdicts
	: >"$table"
	: >"$verdicts"
	(
		. "$lib"
		. "$TMP/$1.sh"
		summary
	)
	rc=$?
}

# expect NAME RC LAST: the status, and the row before the FAILED line (or the last row)
expect() {
	[ "$rc" -eq "$2" ] || fail "$1: exit status $rc, expected $2"
	grep -qxF -- "$3" "$TMP/$1.table" || {
		fail "$1: no row \"$3\""
		sed 's/^/    | /' "$TMP/$1.table" >&2
	}
}

# a CTest -V log: two passed, one failed, two skipped (one with its reason)
cat >"$TMP/ctest.log" <<'EOF'
UpdateCTestConfiguration  from :/b/DartConfiguration.tcl
test 1
    Start 1: unit.json_buf
1: all checks passed
1/5 Test #1: unit.json_buf ....................   Passed    0.01 sec
    Start 2: gpu_oom
2: gpuprof: no CUDA device here: skipped
2/5 Test #2: gpu_oom ..........................***Skipped   0.20 sec
3/5 Test #3: torch.hooks ......................***Failed    1.50 sec
4/5 Test #4: cli.usage ........................   Passed    4.06 sec
5/5 Test #5: analyze_gpu.frag .................***Skipped   0.10 sec

60% tests passed, 1 tests failed out of 5
EOF

cat >"$TMP/all_pass.sh" <<'EOF'
verdict PASS build
row "device: a made-up GPU"
verdict_rc 0 "torch gpt2.native"
verdict_rc 77 "torch_nvtx"
EOF
run_suite all_pass
expect all_pass 0 "2 passed, 0 failed, 1 skipped"
grep -qxF "SKIP torch_nvtx" "$TMP/all_pass.table" || fail "all_pass: exit 77 is not a SKIP row"
grep -q FAILED "$TMP/all_pass.table" && fail "all_pass: a FAILED row"

cat >"$TMP/one_fails.sh" <<'EOF'
verdict PASS build
verdict_rc 1 "history gpt2"
verdict_rc 0 "history resnet50"
EOF
run_suite one_fails
expect one_fails 1 "2 passed, 1 failed, 0 skipped"
grep -qxF "FAIL history gpt2 (exit 1)" "$TMP/one_fails.table" || fail "one_fails: no FAIL row with its exit status"
grep -qxF "FAILED: history gpt2" "$TMP/one_fails.table" || fail "one_fails: the failed checks not named last"

cat >"$TMP/ctest.sh" <<EOF
ctest_verdicts "$TMP/ctest.log" "cpu tests"
EOF
run_suite ctest
expect ctest 1 "2 passed, 1 failed, 2 skipped"
grep -qxF "cpu tests: 2 passed, 1 failed, 2 skipped" "$TMP/ctest.table" || fail "ctest: no count row"
grep -qxF "FAIL cpu tests torch.hooks (Failed)" "$TMP/ctest.table" || fail "ctest: no row for the failed test"
grep -qxF "SKIP cpu tests gpu_oom (gpuprof: no CUDA device here: skipped)" "$TMP/ctest.table" ||
	fail "ctest: a skipped test without its reason"
grep -qxF "SKIP cpu tests analyze_gpu.frag (no reason given)" "$TMP/ctest.table" ||
	fail "ctest: a skipped test without output not said so"
grep -q "unit.json_buf" "$TMP/ctest.table" && fail "ctest: a row for a passed test"

: >"$TMP/empty.log"
cat >"$TMP/no_tests.sh" <<EOF
verdict PASS build
ctest_verdicts "$TMP/empty.log" "gpu tests"
EOF
run_suite no_tests
expect no_tests 1 "FAIL gpu tests (no test ran; see empty.log)"

cat >"$TMP/nothing.sh" <<'EOF'
row "device: a made-up GPU"
verdict SKIP "torch_nvtx"
EOF
run_suite nothing
expect nothing 1 "FAILED: nothing was checked"
grep -qxF "0 passed, 0 failed, 1 skipped" "$TMP/nothing.table" || fail "nothing: no count row"

cat >"$TMP/odd.sh" <<'EOF'
verdict MAYBE "a check"
EOF
run_suite odd
expect odd 1 "FAIL a check (an unknown verdict 'MAYBE')"

# the suite itself: its verdicts come from this library, and its exit status from summary
suite=$(dirname "$lib")/run_gpu_suite.sh
grep -q '^\. "$root/tests/gpu_suite_verdicts.sh"$' "$suite" || fail "run_gpu_suite.sh does not use the library"
grep -q '^exit \$status$' "$suite" || fail "run_gpu_suite.sh does not exit with the summary's status"

[ "$failures" -eq 0 ] && echo "all checks passed" || echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
