# gpuprof --trace exits with PROGRAM's status, or 128+N when a signal N
# killed it (with one line saying so).
# needs: recorder
. "$(dirname "$0")/lib.sh"

for code in 0 1 2 3 42 126 127 255; do
	gp --trace -o "s$code.json.gz" -- sh -c "exit $code"
	check_rc "$code" "exit $code"
	check_no_stdout "exit $code"
	check_no_err "killed" "exit $code"
done

gp --trace -o kill.json.gz -- sh -c 'kill -KILL $$'
check_rc 137 "SIGKILL"
check_err "gpuprof: sh was killed by signal 9 (SIGKILL)" "SIGKILL"
check_no_stdout "SIGKILL"

gp --trace -o segv.json.gz -- sh -c 'kill -SEGV $$'
check_rc 139 "SIGSEGV"
check_err "gpuprof: sh was killed by signal 11 (SIGSEGV)" "SIGSEGV"

# PROGRAM is named as typed, not as the path that was run
gp --trace -o abrt.json.gz -- /bin/sh -c 'kill -ABRT $$'
check_rc 134 "SIGABRT"
check_err "gpuprof: /bin/sh was killed by signal 6 (SIGABRT)" "SIGABRT"

finish
