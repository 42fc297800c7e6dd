# gpuprof recover TRACE [-o OUT]: a trace cut short becomes a valid one ending
# with gpuprof.end recovered=true; anything else is refused with exit 2.
. "$(dirname "$0")/lib.sh"
need_python
tool() { "$PYTHON" "$HERE/trace_tool.py" "$@"; }

# not traces: left alone, exit 2, one line
echo 'hello' >text.json.gz
echo 'hello' | gzip >gz.json.gz
printf '[\n{"ph":"i","name":"other"},\n' | gzip >other.json.gz
: >empty.json.gz
for f in text gz other empty; do
	cp "$f.json.gz" "$f.orig"
	gp recover "$f.json.gz"
	check_rc 2 "recover $f"
	check_err "gpuprof: $f.json.gz: not a gpuprof trace" "recover $f"
	check_no_stdout "recover $f"
	cmp -s "$f.json.gz" "$f.orig" || fail "recover $f changed the file"
	gp recover "$f.json.gz" -o "$f.out"
	check_rc 2 "recover $f -o"
	[ ! -e "$f.out" ] || fail "recover $f -o left an output"
done
gp recover missing.json.gz
check_rc 2 "missing trace"
check_err "gpuprof: missing.json.gz: No such file or directory" "missing trace"
mkdir adir
gp recover adir
check_rc 2 "directory"
check_err "gpuprof: adir: not a gpuprof trace" "directory"

# cut after a sync flush, inside an event line (what SIGKILL leaves)
tool write cut.json.gz 5 --cut flush || exit 1
cp cut.json.gz cut.orig
gp recover cut.json.gz -o fixed.json.gz
check_rc 0 "recover -o"
check_no_stdout "recover -o"
check_err "gpuprof: recovered 6 events from cut.json.gz" "recover -o"
check_err "repaired trace written to fixed.json.gz" "recover -o"
tool check fixed.json.gz --recovered yes --events 6 >/dev/null || fail "recover -o: bad result"
cmp -s cut.json.gz cut.orig || fail "recover -o changed its input"

gp recover -o fixed.json.gz cut.json.gz
check_rc 2 "existing -o"
check_err "fixed.json.gz already exists" "existing -o"

# in place, through a symbolic link: the trace is repaired, the link stays
ln -s cut.json.gz link.json.gz
gp recover link.json.gz
check_rc 0 "recover in place"
check_err "gpuprof: link.json.gz repaired in place" "recover in place"
[ -L link.json.gz ] || fail "recover in place replaced the symbolic link"
tool check cut.json.gz --recovered yes --events 6 >/dev/null || fail "recover in place: bad result"

# cut anywhere in the deflate stream
tool write middle.json.gz 200 --cut middle || exit 1
gp recover middle.json.gz
check_rc 0 "cut in the middle"
tool check middle.json.gz --recovered yes >/dev/null || fail "cut in the middle: bad result"

# complete: nothing to do
tool write whole.json.gz 3 || exit 1
cp whole.json.gz whole.orig
gp recover whole.json.gz
check_rc 0 "complete trace"
check_err "whole.json.gz is already complete" "complete trace"
cmp -s whole.json.gz whole.orig || fail "complete trace was rewritten"
gp recover whole.json.gz -o copy.json.gz
check_rc 0 "complete trace -o"
tool check copy.json.gz --recovered no --events 4 >/dev/null || fail "complete trace -o: bad copy"

finish
