# Option errors are one "gpuprof: " line plus the --help hint on stderr, exit
# 2, nothing on stdout; help and --version are the only stdout gpuprof writes:
# the overview (gpuprof --help) and each command's own (gpuprof COMMAND --help,
# gpuprof help COMMAND).
# needs: recorder
. "$(dirname "$0")/lib.sh"

# usage_error WHAT MESSAGE ARGS...
usage_error() {
	_what=$1 _msg=$2
	shift 2
	gp "$@"
	check_rc 2 "$_what"
	check_no_stdout "$_what"
	check_err "gpuprof: $_msg" "$_what"
	# the hint names the command's own help once a command was given
	case "${1:-}" in
	--trace | trace) _hint="Try 'gpuprof trace --help'." ;;
	recover | --recover) _hint="Try 'gpuprof recover --help'." ;;
	analyze) _hint="Try 'gpuprof analyze --help'." ;;
	*) _hint="Try 'gpuprof --help'." ;;
	esac
	check_err "$_hint" "$_what"
	[ "$(wc -l <err)" -eq 2 ] || { fail "$_what: stderr is not 2 lines"; show err >&2; }
}

usage_error "unknown command" "unknown command 'frobnicate'" frobnicate
# a typo names the nearest command (or option); nothing near, no guess
usage_error "a misspelt command" "unknown command 'analyse'; did you mean 'analyze'?" analyse
usage_error "two letters swapped" "unknown command 'reprot'; did you mean 'report'?" reprot
usage_error "a letter missing" "unknown command 'chek'; did you mean 'check'?" chek
usage_error "the start of a command" "unknown command 'anal'; did you mean 'analyze'?" anal
usage_error "a misspelt --command" "unknown option '--analyse'; did you mean '--analyze'?" --analyse
usage_error "a misspelt --version" "unknown option '--verison'; did you mean '--version'?" --verison
usage_error "version as a word" "unknown command 'version'; did you mean '--version'?" version
usage_error "a misspelt help" "unknown command 'hlep'; did you mean 'help'?" hlep
usage_error "help for a misspelt command" \
	"no help for 'analyse': not a command; did you mean 'analyze'?" help analyse
usage_error "nothing near" "unknown command 'xy'" xy
grep -qF "did you mean" err && fail "xy: a guess for a word near no command"
usage_error "nothing near, longer" "unknown command 'frobnicate'" frobnicate
grep -qF "did you mean" err && fail "frobnicate: a guess for a word near no command"
usage_error "unknown global option" "unknown option '--bogus'" --bogus
usage_error "unknown long option" "unknown option '--bogus'" --trace --bogus true
usage_error "unknown short option" "unknown option '-z'" --trace -z true
usage_error "unknown option in a cluster" "unknown option '-z'" --trace -fz true
usage_error "no argument for a flag" "option '--force' takes no argument" --trace --force=yes true
usage_error "missing PROGRAM" "missing PROGRAM" --trace
usage_error "a threshold of no size" "--dump-at must be bytes (60G, 512MiB) or a share of the device (90%, 87.5%), not '0'" --trace --dump-at 0 true
usage_error "a share over the device" "--dump-at must be bytes (60G, 512MiB) or a share of the device (90%, 87.5%), not '101%'" --trace --dump-at 101% true
usage_error "steps backwards" "--dump-steps must be steps A-B (1 <= A <= B) or one step A, not '9-3'" --trace --dump-steps 9-3 true
usage_error "missing PROGRAM after --" "missing PROGRAM" trace -o x.json.gz --
usage_error "missing -o argument" "option '-o' needs an argument" --trace -o
usage_error "missing --output argument" "option '--output' needs an argument" --trace --output
usage_error "missing --python argument" "option '--python' needs an argument" --trace --python
usage_error "empty -o" "option '-o' needs a file name" --trace -o '' true
usage_error "recover without TRACE" "missing TRACE" recover
usage_error "recover with two traces" "unexpected argument 'b'" recover a b
usage_error "recover bad option" "unknown option '--bogus'" recover --bogus a
usage_error "analyze bad option" "unknown option '--bogus'" analyze --bogus a
[ ! -e x.json.gz ] || fail "a usage error created the output"

usage_error "help for no command" "no help for 'nosuch': not a command" help nosuch
usage_error "help for two commands" "unexpected argument 'check'" help analyze check
usage_error "--help for no command" "no help for 'nosuch': not a command" --help nosuch
usage_error "help after help and more" "unexpected argument 'x'" help --help x

# check_help WHAT TEXT...: the help printed is on stdout alone, has every TEXT
check_help() {
	_what=$1
	shift
	check_rc 0 "$_what"
	[ ! -s err ] || { fail "$_what: wrote to stderr"; show err >&2; }
	for _text in "$@"; do
		grep -qF -- "$_text" out || fail "$_what: no \"$_text\" in the help"
	done
}

# The overview: every command's usage and summary, and where its help is.
for args in "--help" "-h" "help" "help --help" "help help"; do
	# shellcheck disable=SC2086
	gp $args
	check_help "$args" USAGE COMMANDS "EXIT STATUS" \
		"gpuprof --trace [-o PATH] [--force] [--mode MODE] [--ops] [--torch-history]" \
		"                 [--stacks] [--window SECONDS] [--dump-at BYTES|PCT%]" \
		"                 [--dump-steps A-B] [--trace-cap SIZE] [--python PYTHON]" \
		"gpuprof recover TRACE [-o OUT]" "gpuprof analyze TRACE|RUN..." \
		"gpuprof compare BASE NEW" "gpuprof check TRACE..." \
		"gpuprof help [COMMAND] | --help | --version" \
		"  trace      run PROGRAM and record" "  recover    repair a trace cut short" \
		"  analyze    who holds the memory" "  compare    did a change make" \
		"  check      was a run's peak" \
		"gpuprof COMMAND --help, or gpuprof help COMMAND"
	# no command's options: those are in its own help
	! grep -qF -- "--torch-history    native mode" out || fail "$args: trace's options in the overview"
	[ "$(wc -l <out)" -lt 40 ] || fail "$args: the overview is $(wc -l <out) lines"
done
cp out overview

# Each command's own help, asked for in each way, is the same text: its
# usage, options, exit status and examples, no other command's.
for cmd in trace recover analyze compare check; do
	gp help "$cmd"
	check_help "help $cmd" "gpuprof $cmd: " USAGE OPTIONS "EXIT STATUS" EXAMPLES "-h, --help             this help"
	cmp -s out overview && fail "help $cmd: the overview"
	cp out "help.$cmd"
	for args in "$cmd --help" "$cmd -h" "--$cmd --help" "--$cmd -h" "help --$cmd" "--help $cmd"; do
		# shellcheck disable=SC2086
		gp $args
		check_help "$args"
		cmp -s out "help.$cmd" || { fail "$args: not the same as help $cmd"; show out >&2; }
	done
done
check_help_file() {
	_file=$1
	shift
	cp "$_file" out
	: >err
	rc=0
	check_help "$@"
}
check_help_file help.trace "help trace" ENVIRONMENT GPUPROF_INJECT_LIB GPUPROF_PYTHON \
	"gpuprof --trace [-o PATH] [--force] [--mode MODE] [--ops] [--torch-history]" \
	"                 [--stacks] [--window SECONDS] [--dump-at BYTES|PCT%]" \
	"                 [--dump-steps A-B] [--trace-cap SIZE] [--python PYTHON]" \
	"Options go before PROGRAM; what follows PROGRAM is passed to it." \
	"--torch-history    native mode" \
	"--stacks           native mode" \
	"MODES (a GPT-2 training step's cost" "  native     PyTorch's own allocator" "  --stacks   native, and every tensor's Python line" \
	"  tensor     every tensor" "  cuda       allocations, kernels" GPUPROF_TORCH_TRACKER GPUPROF_CACHE \
	"PROGRAM's exit status, or 128+N when PROGRAM was killed by signal N." \
	"gpuprof --trace train.py --epochs 1" \
	"gpuprof --trace -o run.json.gz -- ./app --flag" \
	"gpuprof --trace --stacks train.py" \
	"gpuprof --trace -o run/ -- torchrun --nproc-per-node 8 train.py"
check_help_file help.recover "help recover" "gpuprof recover TRACE [-o OUT]" \
	"-o, --output OUT" "0 repaired (or already complete)" "gpuprof recover run.json.gz"
check_help_file help.analyze "help analyze" "--top N" "NO_COLOR" "0 the report was written" \
	"gpuprof analyze run.json.gz"
check_help_file help.compare "help compare" "--max-increase N%|SIZE" "0 within the limit, 1 a regression" \
	"gpuprof compare baseline.json summary.json"
check_help_file help.check "help check" "--max-peak SIZE|N%" "0 every GPU's peak within the limit, 1 a peak over it" \
	"gpuprof check run.json.gz --max-peak 12GiB"
grep -qF -- "--max-increase" help.check && fail "help check: compare's options"
grep -qF -- "--mode MODE" help.analyze && fail "help analyze: trace's options"

# Bare gpuprof: the overview on stdout (as git does), and exit 2 like any
# usage error, so that a script whose command word came out empty fails.
gp
check_rc 2 "no arguments"
cmp -s out overview || { fail "no arguments: not the overview"; show out >&2; }
grep -qF "(gpuprof with no command" out || fail "no arguments: the overview does not say what it does"
[ ! -s err ] || { fail "no arguments: wrote to stderr"; show err >&2; }

# after PROGRAM, --help is PROGRAM's
gp --trace -o help.json.gz sh -c 'echo "$0"' --help
check_rc 0 "--help after PROGRAM"
check_out "--help" "--help after PROGRAM"

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
