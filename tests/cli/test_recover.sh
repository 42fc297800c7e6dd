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

# a damaged line in the middle of a complete trace: the events after it are
# kept, the program's own end too (not "killed"), and the original beside it
tool write long.json.gz 40 || exit 1
"$PYTHON" - long.json.gz <<'PY'
import gzip, sys
path = sys.argv[1]
with gzip.open(path, "rb") as f:
    lines = f.read().split(b"\n")
lines[20] = b"#bad bytes#" + lines[20][11:]
with gzip.open(path, "wb") as f:
    f.write(b"\n".join(lines))
PY
cp long.json.gz long.before
gp recover long.json.gz
check_rc 0 "damaged line"
check_err "recovered 41 events from long.json.gz" "damaged line"
check_err "passed over: 1 damaged line (" "damaged line"
check_err "the first after event 19; the events after it kept" "damaged line"
check_err "the damaged original is kept as long.json.gz.orig" "damaged line"
cmp -s long.json.gz.orig long.before || fail "damaged line: the original was not kept as it was"
tool check long.json.gz --recovered no --events 40 >/dev/null || fail "damaged line: bad result"
gp analyze long.json.gz
grep -q "note: the trace was damaged: \`gpuprof recover\` passed over 1 line" out ||
	fail "analyze of a damaged trace does not say so: $(cat out)"
grep -q "killed\|did not exit normally" out && fail "analyze of a damaged trace says the program did not end well"

# an output that cannot be written is said to be the output's fault
gp recover cut.orig -o nodir/x.json.gz
check_rc 1 "missing output directory"
check_err "gpuprof: cannot write nodir/x.json.gz: No such file or directory" "missing output directory"

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

# a real trace with a byte of its compressed stream damaged, in 24 places:
# no event that damage altered is kept (each one kept is one of the
# original's, byte for byte), and what was passed over is said
"$PYTHON" - "$GPUPROF" "$HERE/../../samples/traces/batch_doubling.h100.json.gz" <<'PY' >damage.log 2>&1 || fail "recover after damage: $(cat damage.log)"
import gzip, os, subprocess, sys
gp, src = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
orig = set(gzip.decompress(data).decode().splitlines())
kept = 0
for i in range(24):
    pos = len(data) // 4 + i * (len(data) // 2) // 24
    d = bytearray(data)
    d[pos] ^= 0x5A
    open("damaged.json.gz", "wb").write(d)
    if os.path.exists("repaired.json.gz"):
        os.unlink("repaired.json.gz")
    p = subprocess.run([gp, "recover", "damaged.json.gz", "-o", "repaired.json.gz"],
                       capture_output=True, text=True)
    if p.returncode == 2 and "fails the gzip check" in p.stderr:
        assert not os.path.exists("repaired.json.gz"), "refused, yet written"
        continue
    assert p.returncode == 0, "byte %d: exit %d: %s" % (pos, p.returncode, p.stderr)
    assert "passed over" in p.stderr or "lost" in p.stderr, "byte %d: nothing said: %s" % (pos, p.stderr)
    lines = gzip.decompress(open("repaired.json.gz", "rb").read()).decode().splitlines()
    altered = [l for l in lines[:-2] if l not in orig]  # all but the end event and "]"
    assert not altered, "byte %d: %d altered events kept, e.g. %s" % (pos, len(altered), altered[0][:200])
    kept += 1
assert kept >= 12, "only %d of 24 damaged traces recovered" % kept
PY

finish
