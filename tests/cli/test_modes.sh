# --mode and the environment a Python (PyTorch) program gets: the hooks on
# PYTHONPATH (chained to the user's own sitecustomize), and in tensor mode
# PyTorch's allocator configuration switched to cudaMallocAsync.
# needs: recorder
. "$(dirname "$0")/lib.sh"
need_python

# a recorder with the real Python hooks beside it, as in the build tree
mkdir -p lib
cp "$FAKE_RECORDER" lib/libgpuprof_inject.so
cp -r "$HERE/../../profiler/python" lib/python
GPUPROF_INJECT_LIB=$TMP/lib/libgpuprof_inject.so
export GPUPROF_INJECT_LIB
unset PYTHONPATH PYTORCH_CUDA_ALLOC_CONF PYTORCH_ALLOC_CONF GPUPROF_MODE GPUPROF_OPS GPUPROF_TORCH_HISTORY GPUPROF_STACKS

cat >show.py <<'PY'
import os, sys
for k in ("GPUPROF_MODE", "PYTHONPATH", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "GPUPROF_OPS",
          "GPUPROF_TORCH_HISTORY", "GPUPROF_STACKS"):
    print("%s=%s" % (k, os.environ.get(k, "unset")))
print("HOOKED=%s" % any(type(f).__name__ == "_TorchFinder" for f in sys.meta_path))
print("USER_SITE=%s" % os.environ.get("USER_SITE_RAN", "no"))
PY
dump='echo "GPUPROF_MODE=${GPUPROF_MODE-unset}"; echo "PYTHONPATH=${PYTHONPATH-unset}";
echo "PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF-unset}"'

# a plain program: cuda mode, nothing Python-related
gp --trace -o a.json.gz -- sh -c "$dump"
check_rc 0 "cuda mode"
[ "$(line_of GPUPROF_MODE out)" = cuda ] || fail "plain program: mode $(line_of GPUPROF_MODE out)"
[ "$(line_of PYTHONPATH out)" = unset ] || fail "plain program: PYTHONPATH set"
[ "$(line_of PYTORCH_CUDA_ALLOC_CONF out)" = unset ] || fail "plain program: alloc conf set"
check_no_err "tensor mode" "cuda mode"

# a .py program: native mode by default, hooks installed, allocator untouched
gp --trace --python "$PYTHON" -o b.json.gz show.py
check_rc 0 "native mode"
[ "$(line_of GPUPROF_MODE out)" = native ] || fail "script: mode $(line_of GPUPROF_MODE out)"
[ "$(line_of PYTHONPATH out)" = "$TMP/lib/python" ] || fail "script: PYTHONPATH=$(line_of PYTHONPATH out)"
[ "$(line_of PYTORCH_CUDA_ALLOC_CONF out)" = unset ] ||
	fail "script: alloc conf $(line_of PYTORCH_CUDA_ALLOC_CONF out)"
[ "$(line_of HOOKED out)" = True ] || fail "script: gpuprof's torch import hook is not installed"
check_err "gpuprof: native mode: every tensor of PyTorch's own allocator is recorded" "native mode"
check_prefixed "native mode"

# tensor mode: allocator switched; the user's settings are kept, those
# cudaMallocAsync ignores are named
gp --trace --mode tensor --python "$PYTHON" -o b2.json.gz show.py
[ "$(line_of GPUPROF_MODE out)" = tensor ] || fail "tensor: mode $(line_of GPUPROF_MODE out)"
[ "$(line_of PYTORCH_CUDA_ALLOC_CONF out)" = backend:cudaMallocAsync ] ||
	fail "tensor: alloc conf $(line_of PYTORCH_CUDA_ALLOC_CONF out)"
check_err "gpuprof: tensor mode: every tensor is recorded" "tensor mode"
check_prefixed "tensor mode"
PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True, max_split_size_mb:128,backend:native" \
	gp --trace --mode tensor --python "$PYTHON" -o c.json.gz show.py
check_rc 0 "user alloc conf"
[ "$(line_of PYTORCH_CUDA_ALLOC_CONF out)" = "backend:cudaMallocAsync,expandable_segments:True, max_split_size_mb:128" ] ||
	fail "user alloc conf: $(line_of PYTORCH_CUDA_ALLOC_CONF out)"
check_err "expandable_segments has no effect with backend:cudaMallocAsync" "user alloc conf"
check_err "max_split_size_mb has no effect" "user alloc conf"
check_err "your backend:native is replaced by backend:cudaMallocAsync (use --mode native to keep it)" "user alloc conf"

# the newer variable is the one changed when the user set it
PYTORCH_ALLOC_CONF="pinned_use_cuda_host_register:True" gp --trace --mode tensor --python "$PYTHON" -o d.json.gz show.py
[ "$(line_of PYTORCH_ALLOC_CONF out)" = "backend:cudaMallocAsync,pinned_use_cuda_host_register:True" ] ||
	fail "PYTORCH_ALLOC_CONF: $(line_of PYTORCH_ALLOC_CONF out)"
[ "$(line_of PYTORCH_CUDA_ALLOC_CONF out)" = unset ] || fail "PYTORCH_CUDA_ALLOC_CONF set beside PYTORCH_ALLOC_CONF"
check_no_err "no effect" "PYTORCH_ALLOC_CONF"

# native mode: hooks, the user's allocator untouched; --ops passed on
PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" gp --trace --mode native --ops --python "$PYTHON" -o e.json.gz show.py
[ "$(line_of GPUPROF_MODE out)" = native ] || fail "native: mode $(line_of GPUPROF_MODE out)"
[ "$(line_of PYTORCH_CUDA_ALLOC_CONF out)" = "expandable_segments:True" ] || fail "native: alloc conf changed"
[ "$(line_of GPUPROF_OPS out)" = 1 ] || fail "native: --ops not passed on"
[ "$(line_of HOOKED out)" = True ] || fail "native: hooks not installed"
[ "$(line_of GPUPROF_TORCH_HISTORY out)" = unset ] || fail "native: history asked without --torch-history"

# --torch-history: passed on in native mode; refused with a line elsewhere
gp --trace --mode native --torch-history --python "$PYTHON" -o h1.json.gz show.py
[ "$(line_of GPUPROF_TORCH_HISTORY out)" = 1 ] || fail "native: --torch-history not passed on"
gp --trace --mode tensor --torch-history --python "$PYTHON" -o h2.json.gz show.py
[ "$(line_of GPUPROF_TORCH_HISTORY out)" = unset ] || fail "tensor: --torch-history passed on"
check_err "gpuprof: --torch-history needs --mode native" "--torch-history in tensor mode"

# --stacks: passed on in native mode; refused with a line elsewhere
gp --trace --mode native --stacks --python "$PYTHON" -o s1.json.gz show.py
[ "$(line_of GPUPROF_STACKS out)" = 1 ] || fail "native: --stacks not passed on"
check_err "the Python line that made it" "--stacks in native mode"
gp --trace --mode tensor --stacks --python "$PYTHON" -o s2.json.gz show.py
[ "$(line_of GPUPROF_STACKS out)" = unset ] || fail "tensor: --stacks passed on"
check_err "gpuprof: --stacks needs --mode native" "--stacks in tensor mode"

# --mode cuda for a Python program: no hooks
gp --trace --mode cuda --python "$PYTHON" -o f.json.gz show.py
[ "$(line_of GPUPROF_MODE out)" = cuda ] || fail "--mode cuda: $(line_of GPUPROF_MODE out)"
[ "$(line_of HOOKED out)" = False ] || fail "--mode cuda: hooks installed"
gp --trace --mode cuda --ops -o g.json.gz -- true
check_err "--ops needs a PyTorch program" "--ops in cuda mode"

# a launcher script (#! python, like torchrun) is a Python program too
printf '#!/usr/bin/env %s\nexec(open("show.py").read())\n' "$PYTHON" >launcher
chmod +x launcher
PATH=$TMP:$PATH gp --trace -o h.json.gz -- launcher
[ "$(line_of GPUPROF_MODE out)" = native ] || fail "#! python launcher: mode $(line_of GPUPROF_MODE out)"

# the user's own sitecustomize still runs, and their PYTHONPATH is kept
mkdir user
printf 'import os\nos.environ["USER_SITE_RAN"] = "yes"\n' >user/sitecustomize.py
PYTHONPATH=$TMP/user gp --trace --python "$PYTHON" -o i.json.gz show.py
[ "$(line_of USER_SITE out)" = yes ] || fail "the user's sitecustomize did not run"
[ "$(line_of PYTHONPATH out)" = "$TMP/lib/python:$TMP/user" ] || fail "PYTHONPATH=$(line_of PYTHONPATH out)"
[ "$(line_of HOOKED out)" = True ] || fail "hooks not installed beside a user sitecustomize"

# a bad mode is a usage error
gp --trace --mode fast -- true
check_rc 2 "bad mode"
check_err "gpuprof: --mode must be tensor, native or cuda, not 'fast'" "bad mode"

# the hooks missing beside the recorder: said, and the program still runs
rm -rf lib/python
gp --trace --python "$PYTHON" -o j.json.gz show.py
check_rc 0 "hooks missing"
check_err "the PyTorch hooks are missing" "hooks missing"

finish
