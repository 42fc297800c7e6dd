# A gpuprof built without the recorder (GPUPROF_RECORDER=OFF, or no CUDA
# Toolkit found): --trace says so in one line and exits 2 before PROGRAM
# runs, even with a recorder named in GPUPROF_INJECT_LIB; --version says so.
# needs: no recorder
. "$(dirname "$0")/lib.sh"

said="gpuprof: this gpuprof was built without the recorder (no CUDA Toolkit or -DGPUPROF_RECORDER=OFF): --trace cannot record; it reads traces only"

gp --trace true
check_rc 2 "--trace true"
check_no_stdout "--trace true"
printf '%s\n' "$said" >expected
cmp -s expected err || { fail "--trace true: stderr is not the one line"; show err >&2; }

# PROGRAM is not run, with any spelling of the command
for cmd in --trace trace; do
	gp $cmd -o ran.json.gz touch ran
	check_rc 2 "$cmd touch"
	[ ! -e ran ] || fail "$cmd: PROGRAM ran"
	[ ! -e ran.json.gz ] || fail "$cmd: a trace was written"
	[ "$(wc -l <err)" -eq 1 ] || { fail "$cmd: not one line"; show err >&2; }
done

# the help still answers
gp --trace --help
check_rc 0 "--trace --help"

gp --version
check_rc 0 "--version"
grep -qxE 'gpuprof [0-9]+\.[0-9]+\.[0-9]+ \(without the recorder: --trace cannot record\)' out ||
	{ fail "--version does not say the recorder is missing"; show out >&2; }

finish
