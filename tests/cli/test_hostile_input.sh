# Hostile inputs: a FIFO (or another file that is not a regular one) named as
# a trace, a summary, a run directory's trace or its manifest is refused at
# once with one line and exit 2 by analyze, report, merge, check, compare
# and recover; none of them waits on it. `timeout` turns a reader that
# blocks into a failure instead of a hung test.
. "$(dirname "$0")/lib.sh"
need_python
tool() { "$PYTHON" "$HERE/trace_tool.py" "$@"; }
command -v mkfifo >/dev/null && command -v timeout >/dev/null || { echo "SKIP: no mkfifo or timeout" >&2; exit 77; }

# gpt ARGS...: gp, but at most 20 s (exit 124 when it blocked)
gpt() {
	timeout 20 "$GPUPROF" "$@" >out 2>err </dev/null
	rc=$?
}

# refused WHAT NAME ARGS...: exit 2 at once, a line naming NAME as no regular file
refused() {
	_what=$1
	_name=$2
	shift 2
	gpt "$@"
	[ "$rc" -ne 124 ] || { fail "$_what: blocked (killed after 20 s)"; return; }
	check_rc 2 "$_what"
	check_err "$_name: " "$_what"
	check_err "not a regular file" "$_what"
	[ "$(grep -c . err)" -le 2 ] || { fail "$_what: more than a line or two"; show err >&2; }
}

tool write t.json.gz 5 || exit 1
mkfifo fifo.json.gz fifo.json
mkdir sums
"$GPUPROF" analyze --json t.json.gz >sums/a.json 2>/dev/null || fail "analyze --json"

refused "analyze FIFO" fifo.json.gz analyze fifo.json.gz
refused "report FIFO" fifo.json.gz report fifo.json.gz -o p.html
refused "report --base FIFO" fifo.json.gz report t.json.gz --base fifo.json.gz -o p.html
refused "report FIFO summary" fifo.json report fifo.json -o p.html
refused "merge FIFO" fifo.json.gz merge t.json.gz fifo.json.gz -o m.json.gz
refused "check FIFO" fifo.json.gz check fifo.json.gz --max-peak 1GiB
refused "check FIFO summary" fifo.json check fifo.json --max-peak 1GiB
refused "compare FIFO" fifo.json.gz compare t.json.gz fifo.json.gz
refused "compare FIFO summary" fifo.json compare sums/a.json fifo.json
refused "recover FIFO" fifo.json.gz recover fifo.json.gz -o r.json.gz
[ ! -e p.html ] && [ ! -e m.json.gz ] && [ ! -e r.json.gz ] || fail "an output was written"

# a run directory with a FIFO among its traces (no manifest)
mkdir run
cp t.json.gz run/rank0.100.json.gz
mkfifo run/rank1.101.json.gz
for c in analyze report merge check compare; do
	case $c in
	report) set -- report run -o p.html ;;
	merge) set -- merge run -o m.json.gz ;;
	check) set -- check run --max-peak 1GiB ;;
	compare) set -- compare run run ;;
	*) set -- "$c" run ;;
	esac
	refused "$c RUN with a FIFO trace" run/rank1.101.json.gz "$@"
done

# a run directory whose manifest is a FIFO
mkdir run2
cp t.json.gz run2/rank0.100.json.gz
mkfifo run2/manifest.host.1.json
for c in analyze report merge check compare; do
	case $c in
	report) set -- report run2 -o p.html ;;
	merge) set -- merge run2 -o m.json.gz ;;
	check) set -- check run2 --max-peak 1GiB ;;
	compare) set -- compare run2 run2 ;;
	*) set -- "$c" run2 ;;
	esac
	refused "$c RUN with a FIFO manifest" run2/manifest.host.1.json "$@"
done

# a device is no trace either
refused "analyze /dev/zero" /dev/zero analyze /dev/zero
finish
