#!/usr/bin/env bash
# What PyTorch's caching allocator hands a trace tracker
# (c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker) on a GPT-2
# training step, and what a tracker costs, beside PyTorch's own allocator
# history: the facts a native mode that records every tensor is built on.
# Needs a GPU, PyTorch with its C++ headers, transformers and g++.
#   bash bench/alloc_tracker/run.sh [ROUNDS] [STEPS]
# Prints one PROBE line per process: plain, tracker and history in turns,
# ROUNDS times (default 3), then one tracker run timing its callback.
set -u
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-3}
steps=${2:-12}
py=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-tracker.XXXXXX")
trap 'rm -rf "$work"' EXIT
torch_dir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))') || exit 2
abi=$("$py" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))') || exit 2
echo "torch $("$py" -c 'import torch; print(torch.__version__)'), C++11 ABI $abi"
# the shim is built against the headers of the torch that runs it: the
# tracker's TraceEntry is a C++ struct of that version
g++ -O2 -shared -fPIC -std=c++17 -D_GLIBCXX_USE_CXX11_ABI="$abi" \
	-I"$torch_dir/include" -I"$torch_dir/include/torch/csrc/api/include" -I/usr/local/cuda/include \
	"$here/shim.cpp" -L"$torch_dir/lib" -lc10 -lc10_cuda -Wl,-rpath,"$torch_dir/lib" \
	-o "$work/libtracker_probe.so" || exit 2
export GPUPROF_TRACKER_PROBE_LIB=$work/libtracker_probe.so
for _ in $(seq "$rounds"); do
	for mode in plain tracker history; do
		"$py" "$here/probe.py" "$mode" "$steps" 2>&1 | grep '^PROBE'
	done
done
"$py" "$here/probe.py" tracker_timed "$steps" 2>&1 | grep '^PROBE'
