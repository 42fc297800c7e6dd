# What PROGRAM sees, and what happens when the recorder cannot be used.
# needs: recorder
. "$(dirname "$0")/lib.sh"

dump='echo "CUDA=${CUDA_INJECTION64_PATH-unset}"; echo "NVTX=${NVTX_INJECTION64_PATH-unset}";
echo "OUT=${GPUPROF_OUTPUT-unset}"; echo "ROOT=${GPUPROF_ROOT_PID-unset}"; echo "SELF=$$"'
lib=$(readlink -f "$FAKE_RECORDER")

gp --trace -o env.json.gz -- sh -c "$dump"
check_rc 0 "environment"
cuda=$(line_of CUDA out)
case $cuda in /*) ;; *) fail "CUDA_INJECTION64_PATH is not absolute: $cuda" ;; esac
[ -f "$cuda" ] || fail "CUDA_INJECTION64_PATH names no file: $cuda"
[ "$cuda" = "$lib" ] || fail "CUDA_INJECTION64_PATH=$cuda, expected $lib"
[ "$(line_of NVTX out)" = "$lib" ] || fail "NVTX_INJECTION64_PATH=$(line_of NVTX out)"
[ "$(line_of OUT out)" = "$TMP/env.json.gz" ] || fail "GPUPROF_OUTPUT=$(line_of OUT out)"
root=$(line_of ROOT out)
[ -n "$root" ] && [ "$root" = "$(line_of SELF out)" ] ||
	fail "GPUPROF_ROOT_PID=$root is not PROGRAM's pid $(line_of SELF out)"
check_no_err "replacing" "environment"
# this machine cannot record; a machine with a driver says nothing here
if ! have_driver; then
	check_err "gpuprof: no NVIDIA driver (libcuda.so.1 not found): nothing will be recorded" "no driver"
fi
check_err "gpuprof: nothing was recorded: sh made no CUDA call, or the recorder could not start (see the gpuprof: lines above)" "nothing recorded"
check_prefixed "environment"

# a relative GPUPROF_INJECT_LIB is made absolute
cp "$FAKE_RECORDER" ./fake.so
GPUPROF_INJECT_LIB=fake.so gp --trace -o rel.json.gz -- sh -c "$dump"
[ "$(line_of CUDA out)" = "$TMP/fake.so" ] || fail "relative GPUPROF_INJECT_LIB: $(line_of CUDA out)"

# another tool's injection is replaced, with a warning
CUDA_INJECTION64_PATH=/opt/other/libtool.so NVTX_INJECTION64_PATH=/opt/other/libnvtx.so \
	gp --trace -o other.json.gz -- sh -c "$dump"
check_rc 0 "other tool"
check_err "gpuprof: replacing CUDA_INJECTION64_PATH=/opt/other/libtool.so (another tool?)" "other tool"
check_err "gpuprof: replacing NVTX_INJECTION64_PATH=/opt/other/libnvtx.so (another tool?)" "other tool"
[ "$(line_of CUDA out)" = "$lib" ] || fail "other tool: CUDA_INJECTION64_PATH not replaced"
# ... but our own (a nested or repeated setup) is not worth a warning
CUDA_INJECTION64_PATH=$lib gp --trace -o same.json.gz -- true
check_no_err "replacing" "same injection"

# a recorder that does not load: say why, run PROGRAM anyway, record nothing
echo 'not a library' >notalib.so
GPUPROF_INJECT_LIB=notalib.so gp --trace -o bad.json.gz -- sh -c "$dump; exit 5"
check_rc 5 "unloadable recorder"
check_err "gpuprof: cannot load the recorder $TMP/notalib.so: " "unloadable recorder"
check_err "gpuprof: running sh without recording" "unloadable recorder"
check_no_err "nothing was recorded" "unloadable recorder"
[ "$(line_of CUDA out)" = unset ] || fail "unloadable recorder: CUDA_INJECTION64_PATH is set"
[ "$(line_of OUT out)" = unset ] || fail "unloadable recorder: GPUPROF_OUTPUT is set"
[ "$(sed -n '$p' out)" = "SELF=$(line_of SELF out)" ] || fail "unloadable recorder: PROGRAM did not run"
check_prefixed "unloadable recorder"

# no recorder at all: the same
GPUPROF_INJECT_LIB=$TMP/missing.so gp --trace -o none.json.gz -- sh -c "$dump"
check_rc 0 "missing recorder"
check_err "gpuprof: recorder library not found: GPUPROF_INJECT_LIB=$TMP/missing.so: No such file or directory" "missing recorder"
check_err "gpuprof: running sh without recording" "missing recorder"
[ "$(line_of CUDA out)" = unset ] || fail "missing recorder: CUDA_INJECTION64_PATH is set"
GPUPROF_INJECT_LIB=$TMP gp --trace -o dir.json.gz -- true
check_err "GPUPROF_INJECT_LIB=$TMP: Is a directory" "recorder is a directory"

finish
