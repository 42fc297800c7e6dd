#!/usr/bin/env bash
# The whole GPU suite in one call, for the GPU machine (see README.md):
# builds gpuprof there, runs every CTest test (the GPU ones included), the
# PyTorch NVTX check and the GPT-2 overhead benchmark, and prints a short
# table last. Logs and the table go to $OUT (or build/gpu-out).
#   bash tests/run_gpu_suite.sh [--no-bench]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
final=${OUT:-$root/build/gpu-out}
out=$final/logs
mkdir -p "$out"
bench=1
[ "${1:-}" = "--no-bench" ] && bench=0
table=$final/table.txt
: >"$table"
row() { printf '%s\n' "$*" | tee -a "$table" >/dev/null; }

# json-c is not installed on the GPU machine: use the carried Debian packages.
if ! pkg-config --exists json-c 2>/dev/null; then
	dst=$root/.deps/root
	if ! ls "$root"/.deps/debs/*.deb >/dev/null 2>&1; then
		echo "gpu-suite: json-c missing and no .deps/debs carried" >&2
		exit 2
	fi
	mkdir -p "$dst"
	for d in "$root"/.deps/debs/*.deb; do dpkg -x "$d" "$dst"; done
	pc=$dst/usr/lib/x86_64-linux-gnu/pkgconfig
	sed -i "s|=/usr|=$dst/usr|" "$pc/json-c.pc"
	export PKG_CONFIG_PATH=$pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
	export LD_LIBRARY_PATH=$dst/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1
row "device: $(head -1 "$out/gpu.txt") | $(date -u +%Y-%m-%dT%H:%MZ)"

b=$root/build/gpu
rm -rf "$b"
if ! { cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUPROF_WERROR=ON \
	-DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build "$b" -j"$(nproc)"; } >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	row "build: FAILED (see build.log)"
	cat "$table"
	exit 1
fi
row "build: ok"

ctest --test-dir "$b" -LE gpu -j8 --output-on-failure >"$out/cpu_tests.log" 2>&1
row "cpu tests: $(grep -E 'tests passed|tests failed' "$out/cpu_tests.log" | tail -1)"
GPUPROF_RESULTS=$out/gpu_results.txt ctest --test-dir "$b" -L gpu -V >"$out/gpu_tests.log" 2>&1
row "gpu tests: $(grep -E 'tests passed|tests failed' "$out/gpu_tests.log" | tail -1)"
grep -h "RESULT " "$out/gpu_tests.log" | sed 's/^[0-9]*: //' | tee -a "$table" >/dev/null

gp=$b/viewer/gpuprof
# PyTorch's own NVTX (two NVTX copies in one process) must reach gpuprof.
"$gp" --trace --force -o "$out/torch_nvtx.json.gz" tests/torch/nvtx_torch.py >"$out/torch_nvtx.out" 2>"$out/torch_nvtx.err"
python3 tests/torch/check_torch_nvtx.py "$out/torch_nvtx.json.gz" "$out/torch_nvtx.out" >"$out/torch_nvtx.check" 2>&1
cat "$out/torch_nvtx.check" >>"$table"

# torch.profiler in a traced program: it must run on, and our trace stay valid.
"$gp" --trace --force -o "$out/clash.json.gz" tests/torch/profiler_clash.py >"$out/clash.out" 2>"$out/clash.err"
echo "clash rc=$?" >>"$out/clash.out"
python3 - "$out/clash.json.gz" >>"$out/clash.out" 2>&1 <<'PY'
import gzip, json, sys
ev = json.load(gzip.open(sys.argv[1], "rt"))
end = ev[-1]
print("clash trace: valid json, events=%d end=%s kernels=%d allocs=%d" % (len(ev), end.get("name"),
      sum(1 for e in ev if e.get("cat") == "kernel"), sum(1 for e in ev if e.get("name") == "alloc")))
PY
{ grep -h -E "GPUPROF_CLASH|clash" "$out/clash.out"; grep -h "gpuprof:" "$out/clash.err" | head -5; } | sed 's/^/torch.profiler clash: /' >>"$table"

if [ $bench = 1 ]; then
	# Same session, alternating, so that clocks and thermal state are shared.
	for i in 1 2; do
		python3 bench/gpt2_step.py --label plain >>"$out/bench.txt" 2>>"$out/bench.err"
		"$gp" --trace --force -o "$out/gpt2.json.gz" bench/gpt2_step.py --label gpuprof \
			>>"$out/bench.txt" 2>>"$out/bench.err"
	done
	grep GPUPROF_BENCH "$out/bench.txt" >>"$table"
	ls -l "$out/gpt2.json.gz" | awk '{print "gpt2 trace bytes: " $5}' >>"$table"
	python3 - "$out/gpt2.json.gz" >>"$table" 2>&1 <<'PY'
import gzip, json, sys, collections
ev = json.load(gzip.open(sys.argv[1], "rt"))
c = collections.Counter((e.get("cat"), e["ph"]) for e in ev)
end = [e for e in ev if e.get("name") == "gpuprof.end"][-1]["args"]
print("gpt2 trace: events=%d kernels=%d allocs=%d api=%d dropped_cupti=%s dropped_host=%s late=%s"
      % (len(ev), c[("kernel", "X")], sum(1 for e in ev if e.get("name") == "alloc"),
         c[("cuda_runtime", "X")] + c[("cuda_driver", "X")], end["dropped_cupti"],
         end["dropped_host"], end["late_memory_records"]))
PY
fi
# What comes back: the table, one sample trace for samples/traces/, all logs.
cp "$b/tests/gpu/work/alloc_sizes.json.gz" "$final/alloc_sizes.h100.json.gz" 2>/dev/null
cp -r "$b/tests/gpu/work" "$out/gpu_work" 2>/dev/null
tar czf "$final/logs.tar.gz" --exclude='gpt2.json.gz' -C "$final" logs && rm -rf "$out"
echo "===== gpuprof GPU suite ====="
cat "$table"
