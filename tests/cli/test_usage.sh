# Option errors are one "gpuprof: " line plus the --help hint on stderr, exit
# 2, nothing on stdout; --help and --version are the only stdout gpuprof writes.
. "$(dirname "$0")/lib.sh"

# usage_error WHAT MESSAGE ARGS...
usage_error() {
	_what=$1 _msg=$2
	shift 2
	gp "$@"
	check_rc 2 "$_what"
	check_no_stdout "$_what"
	check_err "gpuprof: $_msg" "$_what"
	check_err "Try 'gpuprof --help'." "$_what"
	[ "$(wc -l <err)" -eq 2 ] || { fail "$_what: stderr is not 2 lines"; show err >&2; }
}

usage_error "no arguments" "missing command"
usage_error "unknown command" "unknown command 'frobnicate'" frobnicate
usage_error "unknown global option" "unknown option '--bogus'" --bogus
usage_error "unknown long option" "unknown option '--bogus'" --trace --bogus true
usage_error "unknown short option" "unknown option '-z'" --trace -z true
usage_error "unknown option in a cluster" "unknown option '-z'" --trace -fz true
usage_error "no argument for a flag" "option '--force' takes no argument" --trace --force=yes true
usage_error "missing PROGRAM" "missing PROGRAM" --trace
usage_error "missing PROGRAM after --" "missing PROGRAM" trace -o x.json.gz --
usage_error "missing -o argument" "option '-o' needs an argument" --trace -o
usage_error "missing --output argument" "option '--output' needs an argument" --trace --output
usage_error "missing --python argument" "option '--python' needs an argument" --trace --python
usage_error "empty -o" "option '-o' needs a file name" --trace -o '' true
usage_error "recover without TRACE" "missing TRACE" recover
usage_error "recover with two traces" "unexpected argument 'b'" recover a b
usage_error "recover bad option" "unknown option '--bogus'" recover --bogus a
[ ! -e x.json.gz ] || fail "a usage error created the output"

for args in "--help" "-h" "--trace --help" "trace -h" "recover --help"; do
	# shellcheck disable=SC2086
	gp $args
	check_rc 0 "$args"
	[ ! -s err ] || { fail "$args: wrote to stderr"; show err >&2; }
	for section in USAGE OPTIONS ENVIRONMENT EXAMPLES "EXIT STATUS" \
		"gpuprof --trace [-o PATH] [--force] [--mode MODE] [--ops] [--torch-history]" \
		"                 [--python PYTHON] [--] PROGRAM [ARGS...]" \
		"gpuprof --trace --mode native --torch-history train.py" \
		"gpuprof recover TRACE [-o OUT]" \
		"gpuprof --trace train.py --epochs 1" \
		"gpuprof --trace -o run.json.gz -- ./app --flag" \
		"gpuprof --trace -- torchrun --nproc-per-node 1 train.py" \
		"gpuprof recover run.json.gz"; do
		grep -qF -- "$section" out || fail "$args: no \"$section\" in the help"
	done
done

for args in "--version" "-V"; do
	gp $args
	check_rc 0 "$args"
	grep -qxE 'gpuprof [0-9]+\.[0-9]+\.[0-9]+' out || { fail "$args: not a version"; show out >&2; }
	[ "$(wc -l <out)" -eq 1 ] || fail "$args: more than one line"
	[ ! -s err ] || fail "$args: wrote to stderr"
done

# --trace and trace are the same command
gp trace -o same.json.gz -- sh -c 'echo "$GPUPROF_OUTPUT"'
check_rc 0 "trace alias"
check_out "$TMP/same.json.gz" "trace alias"

finish
