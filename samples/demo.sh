#!/usr/bin/env bash
# One command for a fresh machine: installs what is missing, builds gpuprof,
# and traces the bundled default sample (samples/alloc_sizes.cu).
#   bash samples/demo.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v gcc >/dev/null || need+=(gcc)
command -v pkg-config >/dev/null || need+=(pkg-config)
pkg-config --exists json-c 2>/dev/null || need+=(libjson-c-dev)
pkg-config --exists zlib 2>/dev/null || need+=(zlib1g-dev)
if [ ${#need[@]} -gt 0 ]; then
	echo "demo: installing ${need[*]}"
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
	export PATH=/usr/local/cuda/bin:$PATH
fi

echo "demo: building into build/release"
# the samples for this machine's GPU where there is one (CMake's "native")
arch=()
nvidia-smi -L >/dev/null 2>&1 && arch=(-DCMAKE_CUDA_ARCHITECTURES=native)
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release "${arch[@]}" >/dev/null
cmake --build build/release -j"$(nproc)" >/dev/null

gp=build/release/viewer/gpuprof
trace=$root/build/demo-alloc_sizes.json.gz
echo "demo: $gp --trace --force -o $trace -- build/release/samples/alloc_sizes"
set +e
"$gp" --trace --force -o "$trace" -- build/release/samples/alloc_sizes
rc=$?
set -e
page=$root/build/demo-report.html
if [ -f "$trace" ]; then
	echo "demo: $gp analyze $trace"
	"$gp" analyze "$trace" || true
	echo "demo: $gp report --force $trace -o $page"
	"$gp" report --force "$trace" -o "$page" || true
	echo "demo: done. Open $page in a browser (it fetches nothing), or $trace in https://ui.perfetto.dev"
	exit "$rc"
fi
echo "demo: nothing was recorded on this machine (no usable NVIDIA GPU)."
bundled=$root/samples/traces/alloc_sizes.h100.json.gz
if [ -f "$bundled" ]; then
	echo "demo: the same sample recorded on an H100, analyzed: $gp analyze $bundled"
	"$gp" analyze "$bundled" || true
	echo "demo: $gp report --force $bundled -o $page"
	"$gp" report --force "$bundled" -o "$page"
	echo "demo: the report is $page: open it in a browser (it fetches nothing);"
	echo "demo: open $bundled in https://ui.perfetto.dev to see its kernels and ranges"
fi
exit 0
