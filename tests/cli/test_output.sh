# The output path: absolute for the recorder, default name, and refusals that
# keep an existing file, or what a symbolic link points to, safe.
# needs: recorder
. "$(dirname "$0")/lib.sh"

# The stand-in recorder writes nothing; PROGRAM prints the path it was given.
show_output='echo "$GPUPROF_OUTPUT"'

gp --trace -o run.json.gz -- sh -c "$show_output"
check_rc 0 "relative -o"
check_out "$TMP/run.json.gz" "relative -o"

mkdir sub
gp --trace -o sub/../sub/r.json.gz -- sh -c "$show_output"
check_out "$TMP/sub/r.json.gz" "-o through .."

gp --trace -o "$TMP/sub/abs.json.gz" -- sh -c "$show_output"
check_out "$TMP/sub/abs.json.gz" "absolute -o"

# default: gpuprof-<program>-<YYYYmmdd-HHMMSS>.json.gz in the current directory
gp --trace -- sh -c "$show_output"
check_rc 0 "default name"
grep -qxE "$TMP/gpuprof-sh-[0-9]{8}-[0-9]{6}\\.json\\.gz" out ||
	{ fail "default name"; show out >&2; }

# refused before PROGRAM runs: exit 2, one line, file untouched
# refused WHAT TEXT ARGS...
refused() {
	_what=$1 _text=$2
	shift 2
	rm -f ran
	gp --trace "$@" -- sh -c 'echo ran >ran'
	check_rc 2 "$_what"
	check_err "$_text" "$_what"
	check_no_stdout "$_what"
	[ "$(wc -l <err)" -eq 1 ] || { fail "$_what: not one line"; show err >&2; }
	[ ! -e ran ] || fail "$_what: PROGRAM ran"
}

echo old >exists.json.gz
refused "existing output" "$TMP/exists.json.gz already exists (--force replaces it)" -o exists.json.gz
[ "$(cat exists.json.gz)" = old ] || fail "existing output was changed"

gp --trace -o exists.json.gz --force -- sh -c 'test -e "$GPUPROF_OUTPUT" && echo present || echo gone'
check_rc 0 "--force"
check_out gone "--force moves the old trace away before PROGRAM runs"
# nothing recorded (no driver, no CUDA call): the old trace is put back
[ "$(cat exists.json.gz)" = old ] || fail "--force lost a trace that nothing replaced"
grep -q "exists.json.gz was not replaced: nothing new was written there" err ||
	fail "--force did not say the old trace was kept: $(cat err)"
# a new trace replaces it, and nothing is left beside it
gp --trace -o exists.json.gz --force -- sh -c 'echo new >"$GPUPROF_OUTPUT"'
check_rc 0 "--force, a new trace"
[ "$(cat exists.json.gz)" = new ] || fail "--force did not leave the new trace"
[ -z "$(ls | grep gpuprof-old)" ] || fail "--force left the old trace beside the new: $(ls)"

echo precious >target
ln -s target link.json.gz
refused "symlink" "$TMP/link.json.gz is a symbolic link" -o link.json.gz
[ -L link.json.gz ] || fail "symlink was removed without --force"
ln -s nowhere dangling.json.gz
refused "dangling symlink" "$TMP/dangling.json.gz is a symbolic link" -o dangling.json.gz
[ -L dangling.json.gz ] || fail "dangling symlink was removed"

# with --force the link itself goes; what it pointed to stays as it was
gp --trace --force -o link.json.gz -- sh -c 'echo new >"$GPUPROF_OUTPUT"'
check_rc 0 "--force on a symlink"
[ ! -L link.json.gz ] || fail "--force kept the symlink"
[ "$(cat target)" = precious ] || fail "--force wrote through the symlink"

# a directory: a run directory (made where -o ends in '/'), for every
# process's trace and the launcher's manifest (test_run_dir.sh: the rest)
mkdir dir.json.gz
gp --trace -o dir.json.gz -- sh -c 'echo "$GPUPROF_RUN_DIR"'
check_rc 0 "an existing directory"
check_out "$TMP/dir.json.gz" "an existing directory: a run directory"
ls dir.json.gz/manifest.*.json >/dev/null 2>&1 || fail "an existing directory: no manifest"
gp --trace -o newrun/ -- sh -c 'echo "$GPUPROF_RUN_DIR"'
check_out "$TMP/newrun" "trailing slash: a run directory, made"
refused "run directory in a missing directory" "nodir/run/: No such file or directory" -o nodir/run/
refused "missing directory" "directory nodir: No such file or directory" -o nodir/x.json.gz
echo file >afile
refused "directory is a file" "directory afile: Not a directory" -o afile/x.json.gz
if [ "$(id -u)" -ne 0 ]; then
	mkdir ro
	chmod 555 ro
	refused "read-only directory" "directory ro: Permission denied" -o ro/x.json.gz
	chmod 755 ro
else
	echo "note: running as root, read-only directory not checked" >&2
fi

# without a recorder the old trace is not removed: nothing would replace it
echo old >kept.json.gz
GPUPROF_INJECT_LIB=$TMP/missing.so gp --trace --force -o kept.json.gz -- true
check_rc 0 "--force without a recorder"
[ "$(cat kept.json.gz)" = old ] || fail "--force removed a trace that nothing replaced"

finish
