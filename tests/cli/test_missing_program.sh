# A PROGRAM that cannot be run: exit 2 with one clear line, and nothing runs
# (no recorder messages, no trace search).
# needs: recorder
. "$(dirname "$0")/lib.sh"

# cannot_run WHAT SHOWN ERROR ARGS...
cannot_run() {
	_what=$1 _shown=$2 _error=$3
	shift 3
	gp --trace "$@"
	check_rc 2 "$_what"
	check_no_stdout "$_what"
	check_err "gpuprof: cannot run '$_shown': $_error" "$_what"
	check_no_err "nothing was recorded" "$_what"
	check_no_err "trace written" "$_what"
	check_prefixed "$_what"
}

cannot_run "missing path" ./nosuch "No such file or directory" ./nosuch
cannot_run "missing in PATH" nosuch-gpuprof-cmd "No such file or directory" nosuch-gpuprof-cmd
cannot_run "empty name" "" "No such file or directory" ''

echo 'echo ran >ran' >noexec
cannot_run "not executable" ./noexec "Permission denied" ./noexec
mkdir adir
cannot_run "a directory" ./adir "Permission denied" ./adir

# Passes every check made before fork(), fails in execve(): the child
# reports it through the close-on-exec pipe.
printf '#!/nonexistent/interpreter\necho ran >ran\n' >badinterp
chmod +x badinterp
cannot_run "exec fails in the child" ./badinterp "No such file or directory" ./badinterp
[ ! -e ran ] || fail "something ran"

# PATH lookup as execvp() does it
mkdir bin
printf '#!/bin/sh\necho "found $*"\n' >bin/gpuprof-test-tool
chmod +x bin/gpuprof-test-tool
PATH="$TMP/bin:$PATH" gp --trace -o p.json.gz gpuprof-test-tool a b
check_rc 0 "PATH lookup"
check_out "found a b" "PATH lookup"

finish
