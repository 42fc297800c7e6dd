# Like system(3): Ctrl-C reaches PROGRAM (same process group) but not the
# launcher, which must live to finish the trace; SIGTERM and SIGHUP sent to the
# launcher alone are passed on to PROGRAM. PROGRAM's parent ($PPID) is gpuprof.
# needs: recorder
. "$(dirname "$0")/lib.sh"

gp --trace -o int.json.gz -- sh -c 'kill -INT $PPID; kill -QUIT $PPID; sleep 0.3; echo survived'
check_rc 0 "SIGINT/SIGQUIT to the launcher"
check_out survived "SIGINT/SIGQUIT to the launcher"
check_err "nothing was recorded" "SIGINT/SIGQUIT to the launcher: it finished"

# PROGRAM gets the dispositions gpuprof started with, not the launcher's
ignored=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
if [ $((0x$ignored & 2)) -eq 0 ]; then
	gp --trace -o int2.json.gz -- sh -c 'kill -INT $$; echo not-killed'
	check_rc 130 "SIGINT to PROGRAM"
	check_err "gpuprof: sh was killed by signal 2 (SIGINT)" "SIGINT to PROGRAM"
	check_no_stdout "SIGINT to PROGRAM"
else
	echo "note: SIGINT ignored by the test runner, default disposition not checked" >&2
fi

# forward SIG CODE
forward() {
	start=$(date +%s)
	gp --trace -o "$1.json.gz" -- sh -c "kill -$1 \$PPID; exec sleep 10"
	check_rc "$2" "SIG$1 forwarded"
	check_err "gpuprof: sh was killed by signal $(($2 - 128)) (SIG$1)" "SIG$1 forwarded"
	[ $(($(date +%s) - start)) -lt 8 ] || fail "SIG$1 was not forwarded at once"
}
forward TERM 143
forward HUP 129

# ignored when gpuprof starts (nohup, a background job): stays ignored for
# both, so neither dies
(trap '' HUP INT; exec "$GPUPROF" --trace -o nohup.json.gz -- \
	sh -c 'kill -HUP $PPID; kill -HUP $$; kill -INT $$; echo alive') >out 2>err
rc=$?
check_rc 0 "ignored signals stay ignored"
check_out alive "ignored signals stay ignored"

# an ignored SIGCHLD would let the kernel reap PROGRAM and lose its status
(trap '' CHLD; exec "$GPUPROF" --trace -o chld.json.gz -- sh -c 'exit 7') >out 2>err
rc=$?
check_rc 7 "SIGCHLD ignored on entry"

finish
