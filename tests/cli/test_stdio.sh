# PROGRAM's stdin, stdout and stderr are its own: bytes pass through
# untouched and gpuprof writes nothing to stdout.
# needs: recorder
. "$(dirname "$0")/lib.sh"

# every byte value, no trailing newline
i=0
while [ $i -lt 256 ]; do
	printf "\\$(printf %03o $i)"
	i=$((i + 1))
done >bytes
[ "$(wc -c <bytes)" -eq 256 ] || { echo "cannot make test data" >&2; exit 1; }

gp --trace -o a.json.gz -- cat bytes
check_rc 0 "stdout"
cmp -s bytes out || fail "PROGRAM's stdout was changed"

gp_in bytes --trace -o b.json.gz -- cat
check_rc 0 "stdin"
cmp -s bytes out || fail "PROGRAM's stdin was changed"

# Without a recorder gpuprof speaks only before PROGRAM runs, so stderr ends
# with PROGRAM's bytes.
GPUPROF_INJECT_LIB=$TMP/missing.so gp --trace -o c.json.gz -- sh -c 'cat bytes >&2; echo stdout-line'
check_rc 0 "stderr"
check_out "stdout-line" "stderr"
tail -c 256 err >err-tail
cmp -s bytes err-tail || fail "PROGRAM's stderr was changed"

# inherited, not relayed: PROGRAM writes to the very files gpuprof was given
gp --trace -o e.json.gz -- sh -c 'readlink /proc/self/fd/1 /proc/self/fd/2' </dev/null
printf '%s\n%s\n' "$TMP/out" "$TMP/err" >expected
cmp -s expected out || { fail "stdout/stderr are not inherited"; show out >&2; }

# gpuprof's messages (here: nothing was recorded) never go to stdout
gp --trace -o d.json.gz -- true
check_rc 0 "quiet program"
check_no_stdout "quiet program"
check_err "gpuprof: nothing was recorded" "quiet program"
check_prefixed "quiet program"

finish
