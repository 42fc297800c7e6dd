# The GPU suite's table and verdicts (sourced by tests/run_gpu_suite.sh, and
# by tests/test_gpu_suite_verdicts.sh, which feeds it made-up results on any
# machine). Every check the suite runs ends in one verdict, PASS, FAIL or
# SKIP, written to the table as it comes and kept, one a line, in $verdicts;
# the last row counts them and the suite's exit status is 1 when any check
# failed or none ran. Needs $table and $verdicts (files, appended to).

# row TEXT...: a row of the table with no verdict (a measurement, a note)
row() {
	printf '%s\n' "$*" >>"$table"
}

# verdict STATUS NAME [DETAIL...]: one check's outcome, a row "STATUS NAME DETAIL"
verdict() {
	_status=$1
	case $_status in
	PASS | FAIL | SKIP) ;;
	*)
		shift
		verdict FAIL "$*" "(an unknown verdict '$_status')"
		return
		;;
	esac
	printf '%s %s\n' "$_status" "$2" >>"$verdicts"
	row "$@"
}

# verdict_rc RC NAME [DETAIL...]: a command's exit status as a verdict: 0 PASS,
# 77 SKIP (the check could not run here; its output says why), else FAIL
verdict_rc() {
	_rc=$1
	shift
	case $_rc in
	0) verdict PASS "$@" ;;
	77) verdict SKIP "$@" ;;
	*) verdict FAIL "$@" "(exit $_rc)" ;;
	esac
}

# ctest_verdicts LOG WHAT: one verdict per test of a CTest log (ctest -V, so
# that a skipped test's last line of output, its reason, is in it). Failed
# and skipped tests get a row each, passed ones are only counted; then a row
# "WHAT: N passed, N failed, N skipped". A log without any test fails.
ctest_verdicts() {
	_log=$1 _what=$2
	_pass=0 _fail=0 _skip=0
	# "12/80 Test #34: name ....***Skipped   1.5 sec": number, name, status
	# shellcheck disable=SC2016
	_tests=$(sed -n 's/^ *[0-9]*\/[0-9]* *Test *#\([0-9]*\): \([^ ]*\) \.*\(.*\)$/\1 \2 \3/p' "$_log")
	while read -r _num _name _status; do
		[ -n "$_num" ] || continue
		case $_status in
		Passed*)
			_pass=$((_pass + 1))
			printf 'PASS %s\n' "$_what $_name" >>"$verdicts"
			;;
		'***Skipped'*)
			_skip=$((_skip + 1))
			_why=$(grep "^$_num: " "$_log" | tail -n 1 | sed "s/^$_num: //" | cut -c1-200)
			verdict SKIP "$_what $_name" "(${_why:-no reason given})"
			;;
		*)
			_fail=$((_fail + 1))
			verdict FAIL "$_what $_name" "($(printf '%s' "$_status" | sed 's/^\**//; s/ *[0-9.]* sec$//'))"
			;;
		esac
	done <<EOF
$_tests
EOF
	if [ $((_pass + _fail + _skip)) -eq 0 ]; then
		verdict FAIL "$_what" "(no test ran; see $(basename "$_log"))"
		return
	fi
	row "$_what: $_pass passed, $_fail failed, $_skip skipped"
}

# summary: the last row, "N passed, N failed, N skipped"; returns 0 when
# something was checked and nothing failed, else 1
summary() {
	_pass=$(grep -c '^PASS ' "$verdicts")
	_fail=$(grep -c '^FAIL ' "$verdicts")
	_skip=$(grep -c '^SKIP ' "$verdicts")
	row "$_pass passed, $_fail failed, $_skip skipped"
	if [ "$_fail" -gt 0 ]; then
		row "FAILED: $(grep '^FAIL ' "$verdicts" | cut -c6- | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
		return 1
	fi
	if [ "$_pass" -eq 0 ]; then
		row "FAILED: nothing was checked"
		return 1
	fi
	return 0
}
