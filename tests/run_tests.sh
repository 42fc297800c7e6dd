#!/usr/bin/env bash
# The test command (README.md): builds gpuprof twice — a -Werror build with the
# CUDA samples, and an ASan/UBSan build — and runs every CTest test in both.
# GPU tests skip themselves (exit 77) on a machine without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${GPUPROF_JOBS:-$(nproc)}
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
	export PATH=/usr/local/cuda/bin:$PATH
fi

echo "== build: -Werror, samples"
mkdir -p build
cmake -S . -B build/ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUPROF_WERROR=ON >build/ci.configure.log 2>&1 \
	|| { cat build/ci.configure.log; exit 1; }
cmake --build build/ci -j"$jobs"
ctest --test-dir build/ci --output-on-failure -j"$jobs"

echo "== build: ASan + UBSan"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DGPUPROF_WERROR=ON -DGPUPROF_SANITIZE=ON \
	-DGPUPROF_BUILD_SAMPLES=OFF >build/asan.configure.log 2>&1 || { cat build/asan.configure.log; exit 1; }
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE gpu
