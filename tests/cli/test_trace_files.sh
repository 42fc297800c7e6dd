# After PROGRAM ends: the traces it left (its own and its children's) are
# found, repaired when cut short, and listed. A program plays the recorder's
# part here, writing traces where the recorder would (see trace_tool.py).
# needs: recorder
. "$(dirname "$0")/lib.sh"
need_python
tool() { "$PYTHON" "$HERE/trace_tool.py" "$@"; }
# the size as gpuprof prints it (viewer/analyze/result/units.h): "N B" below 1 KiB,
# else three significant digits: "7.08 KiB", "15.2 KiB", "118 KiB"
hsize() {
	stat -c %s "$1" | awk '{ v = $1; u = 1; split("B KiB MiB GiB TiB", unit, " ");
		while (v >= 1024 && u < 5) { v /= 1024; u++ }
		if (u == 1) printf "%d B", $1;
		else if (v < 10) printf "%.2f %s", v, unit[u];
		else if (v < 100) printf "%.1f %s", v, unit[u];
		else printf "%.0f %s", v, unit[u] }'
}

# one complete trace
gp --trace -o one.json.gz -- "$PYTHON" "$HERE/trace_tool.py" write one.json.gz 3
check_rc 0 "one trace"
check_no_stdout "one trace"
check_err "gpuprof: trace written to $TMP/one.json.gz ($(hsize one.json.gz))" "one trace"
check_err "gpuprof: open it in https://ui.perfetto.dev (Open trace file), or run: gpuprof analyze $TMP/one.json.gz" "one trace"
check_no_err "cut short" "one trace"
check_no_err "nothing was recorded" "one trace"
check_prefixed "one trace"
tool check one.json.gz --recovered no --events 4 >/dev/null || fail "one trace: changed"

# PROGRAM killed after writing part of its trace (a .py: run by --python)
gp --trace --python "$PYTHON" -o run.json.gz "$HERE/trace_tool.py" program 4
running=$(cat running.pid 2>/dev/null)
check_rc 137 "killed program"
check_no_stdout "killed program"
check_prefixed "killed program"
check_err "gpuprof: $HERE/trace_tool.py was killed by signal 9 (SIGKILL)" "killed program"
check_err "gpuprof: trace cut short; recovered 5 events up to the last flush ($TMP/run.json.gz)" "killed program"
tool check run.json.gz --recovered yes --events 5 >/dev/null || fail "killed program: root trace not repaired"
check_err "gpuprof: 3 traces written, one per process that used CUDA:" "killed program"
check_err "gpuprof:   $TMP/run.json.gz ($(hsize run.json.gz))" "killed program"
done_trace=
for f in run.[1-9]*.json.gz; do
	case $f in run.1.json.gz | "run.$running.json.gz" | run.12x.json.gz) ;; *) done_trace=$f ;; esac
done
if [ -z "$done_trace" ]; then
	fail "killed program: the ended child's trace is missing"
else
	check_err "gpuprof:   $TMP/$done_trace ($(hsize "$done_trace"))" "ended child listed"
	tool check "$done_trace" --recovered no --events 3 >/dev/null || fail "ended child's trace changed"
fi
# still being written: listed, not touched
grep -qE "^gpuprof:   $TMP/run\.$running\.json\.gz \([0-9.]+ (B|KiB)\)\$" err ||
	{ fail "running child listed"; show err >&2; }
check_err "gpuprof:   process $running is still running and writing it; once it ends: gpuprof recover $TMP/run.$running.json.gz" "running child"
if gzip -t "run.$running.json.gz" 2>/dev/null; then fail "running child's trace was repaired"; fi
# an earlier run's file and a look-alike: ignored
check_no_err "run.1.json.gz" "stale child trace"
check_no_err "run.12x.json.gz" "look-alike"
if gzip -t run.1.json.gz 2>/dev/null; then fail "stale child trace was repaired"; fi
# every finished trace, for one analysis; not the one still being written
check_err "gpuprof: open them in https://ui.perfetto.dev (Open trace file), or run: gpuprof analyze " "killed program"
hint=$(grep -F "or run: gpuprof analyze " err)
case " $hint " in *" $TMP/run.json.gz "*) ;; *) fail "analyze hint: the root trace missing: $hint" ;; esac
[ -z "$done_trace" ] || case " $hint " in *" $TMP/$done_trace "*) ;; *) fail "analyze hint: $done_trace missing: $hint" ;; esac
case " $hint " in *"run.$running.json.gz"*) fail "analyze hint names the trace still being written: $hint" ;; esac
[ -n "$running" ] && kill "$running" 2>/dev/null

# not a trace: left as it is
gp --trace -o junk.json.gz -- sh -c 'echo junk >"$GPUPROF_OUTPUT"'
check_rc 0 "junk trace"
check_err "gpuprof: $TMP/junk.json.gz is not a readable gpuprof trace; left as it is" "junk trace"
[ "$(cat junk.json.gz)" = junk ] || fail "junk trace was changed"

# an output name without .json.gz: children write NAME.PID
gp --trace -o plain.trace -- sh -c '"$0" "$1" write "$GPUPROF_OUTPUT" 1 &&
	sh -c "exec \"\$0\" \"\$1\" write \"\$GPUPROF_OUTPUT.\$\$\" 1" "$0" "$1"' \
	"$PYTHON" "$HERE/trace_tool.py"
check_rc 0 "NAME.PID"
check_err "gpuprof: 2 traces written, one per process that used CUDA:" "NAME.PID"
check_err "gpuprof:   $TMP/plain.trace ($(hsize plain.trace))" "NAME.PID"
grep -qE "^gpuprof:   $TMP/plain\.trace\.[0-9]+ \([0-9.]+ (B|KiB)\)\$" err ||
	{ fail "NAME.PID: child trace not listed"; show err >&2; }

finish
