#!/usr/bin/env bash
# The test command (README.md): builds gpuprof five times — a -Werror build
# with the CUDA samples, the Release build of README.md's Install with -Werror,
# an ASan/UBSan build, a ThreadSanitizer build of the recorder's threaded
# code, and the answer side alone without the recorder — and runs every
# CTest test in the first, the ASan and the answer-side builds; the Release
# build is installed and its gpuprof reads a bundled trace; the
# ThreadSanitizer build runs the tests of threaded code (label thread);
# last, `pip install .`'s wheels in fresh virtual environments
# (tests/pip/test_pip_install.sh).
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

# The recorder's threads (the writer, CUPTI's buffer pool, host events, the
# exit and signal paths) under ThreadSanitizer, over the stand-in CUPTI of
# tests/recorder/exits: only the tests labelled thread, and what they run
# (the target thread_tests); a report fails them (tests/tsan.supp: the
# reports that are no race, and why).
echo "== build: ThreadSanitizer (the recorder's threads)"
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=Debug -DGPUPROF_WERROR=ON -DGPUPROF_SANITIZE=thread \
	-DGPUPROF_BUILD_SAMPLES=OFF >build/tsan.configure.log 2>&1 || { cat build/tsan.configure.log; exit 1; }
cmake --build build/tsan -j"$jobs" --target thread_tests
# ThreadSanitizer of gcc 12 cannot map its shadow memory beside the 32 bits
# of mmap randomisation newer kernels use (vm.mmap_rnd_bits, Ubuntu 24.04):
# the tests run without randomisation where setarch can turn it off.
no_aslr=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
	no_aslr=(setarch "$(uname -m)" -R)
fi
# one at a time: the exit tests time how soon a process ends
"${no_aslr[@]}" ctest --test-dir build/tsan --output-on-failure -L thread

# What a machine without the CUDA Toolkit builds: exporters/ and viewer/, no
# CUDA header or library; its tests are those it registers. Without ISA-L
# too, where the builds above had it: the reader's chunks then inflate with
# zlib alone, and its tests hold that path as well.
echo "== build: the answer side alone (-DGPUPROF_RECORDER=OFF -DGPUPROF_ISAL=OFF)"
cmake -S . -B build/norec -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUPROF_WERROR=ON -DGPUPROF_RECORDER=OFF \
	-DGPUPROF_ISAL=OFF >build/norec.configure.log 2>&1 || { cat build/norec.configure.log; exit 1; }
cmake --build build/norec -j"$jobs"
ctest --test-dir build/norec --output-on-failure -j"$jobs"
# no toolkit found: the same build, and the configure says why
cmake -S . -B build/nocuda -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >build/nocuda.configure.log 2>&1 \
	|| { cat build/nocuda.configure.log; exit 1; }
grep -q "gpuprof: no CUDA Toolkit found" build/nocuda.configure.log \
	|| { cat build/nocuda.configure.log; echo "no CUDA Toolkit: the configure did not say so"; exit 1; }
[ ! -e build/nocuda/profiler ] || { echo "no CUDA Toolkit: profiler/ was configured"; exit 1; }

# pip install . (pyproject.toml): the wheel, built offline, in a fresh virtual
# environment; the answer side's too (tests/pip/test_pip_install.sh)
echo "== pip install ."
rc=0
CMAKE_BUILD_PARALLEL_LEVEL=$jobs bash tests/pip/test_pip_install.sh || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit 1
