#!/usr/bin/env bash
# The test command (README.md): builds gpuprof three times — a -Werror build
# with the CUDA samples, the Release build of README.md's Install with -Werror,
# and an ASan/UBSan build — and runs every CTest test in the first and last;
# the Release build is installed and its gpuprof reads a bundled trace.
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

# What users build (README.md, Install): -O3 finds warnings -O2 does not.
echo "== build: Release, -Werror (README's Install)"
cmake -S . -B build/rel -DCMAKE_BUILD_TYPE=Release -DGPUPROF_WERROR=ON >build/rel.configure.log 2>&1 \
	|| { cat build/rel.configure.log; exit 1; }
cmake --build build/rel -j"$jobs"
rm -rf build/rel-install
cmake --install build/rel --prefix build/rel-install >/dev/null
# its peak is 602 MiB (631 MB): within 1GB, over 600MB
sample=samples/traces/alloc_sizes.h100.json.gz
build/rel-install/bin/gpuprof analyze "$sample" >/dev/null
build/rel-install/bin/gpuprof check "$sample" --max-peak 1GB >/dev/null
rc=0
build/rel-install/bin/gpuprof check "$sample" --max-peak 600MB >/dev/null || rc=$?
[ "$rc" -eq 1 ] || { echo "the installed Release gpuprof: check over its limit exited $rc, not 1"; exit 1; }

echo "== build: ASan + UBSan"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DGPUPROF_WERROR=ON -DGPUPROF_SANITIZE=ON \
	-DGPUPROF_BUILD_SAMPLES=OFF >build/asan.configure.log 2>&1 || { cat build/asan.configure.log; exit 1; }
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE gpu
