#!/usr/bin/env bash
# The whole GPU suite in one call, on a machine with an NVIDIA GPU (README.md):
# builds gpuprof there, runs every CTest test (the GPU ones included), the
# PyTorch NVTX check and the GPT-2 overhead benchmark, and prints a short
# table last. Logs and the table go to $OUT (or build/gpu-out), the table row
# by row as the checks end. Every check ends in a verdict, PASS, FAIL or SKIP
# (tests/gpu_suite_verdicts.sh); the table's last row counts them and the
# exit status is 1 when any check failed or none ran, else 0.
#   bash tests/run_gpu_suite.sh [--only SECTION,...]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
final=${OUT:-$root/build/gpu-out}
out=$final/logs
mkdir -p "$out"
# sections: tests (CPU + GPU ctest), torch_nvtx, clash, torch (real models), native
# (native mode's allocator hook on real models and stories, against PyTorch's
# own numbers), history, features (workers, AMP, checkpointing, compile,
# torchrun, -m), failures (signals, SIGKILL, _exit, CuPy, JAX, a released cache,
# out of memory: tests/gpu/failures/run.py), ranks (torchrun jobs of a rank per
# GPU, 2 to 4, in run directories: a toy, GPT-2 with DDP and FSDP2, ranks of
# uneven batches, a rank whose batch grows until it runs out, one NCCL rank,
# one process on the host, the merged and aligned traces:
# tests/gpu/ranks/check_ranks.py), segments (PyTorch's segments and blocks
# against its own snapshot: tests/torch/check_segments.py), samples
# (samples/pytorch/run_all.sh), pip (pip install . here, offline, into a fresh
# virtual environment, its gpuprof recording a CUDA sample:
# tests/pip/test_pip_install.sh), noise (repeated runs for compare), cost (per-event costs), bench (overhead);
# all by default, or --only a,b
only=all
[ "${1:-}" = "--only" ] && only=${2:-all}
want() { [ "$only" = all ] || case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
table=$final/table.txt
verdicts=$final/verdicts.txt
: >"$table"
: >"$verdicts"
. "$root/tests/gpu_suite_verdicts.sh"

# json-c not installed (and no root or network to install it): unpack Debian's
# packages from .deps/debs, where tests/gpu_snapshot.sh fetches them.
if ! pkg-config --exists json-c 2>/dev/null; then
	dst=$root/.deps/root
	if ! ls "$root"/.deps/debs/*.deb >/dev/null 2>&1; then
		echo "gpu-suite: json-c missing: install libjson-c-dev, or put its Debian packages in .deps/debs" >&2
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
configure() {
	cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUPROF_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=native
}
# a warm machine keeps the last build; a stale cache is thrown away once
if ! { { configure || { rm -rf "$b" && configure; }; } && cmake --build "$b" -j"$(nproc)"; } >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	verdict FAIL build "(see build.log)"
	summary
	cat "$table"
	exit 1
fi
verdict PASS build

if want tests; then
# -V: a skipped test's reason (its last line) is in the log
ctest --test-dir "$b" -LE gpu -j8 -V >"$out/cpu_tests.log" 2>&1
ctest_verdicts "$out/cpu_tests.log" "cpu tests"
GPUPROF_ANALYZE_WORK=$out/analyze_work GPUPROF_RESULTS=$out/gpu_results.txt ctest --test-dir "$b" -L gpu -V >"$out/gpu_tests.log" 2>&1
ctest_verdicts "$out/gpu_tests.log" "gpu tests"
# what the GPU tests measured (their verdicts are the ctest ones above)
grep -h "RESULT " "$out/gpu_tests.log" | sed 's/^[0-9]*: //' | tee -a "$table" >/dev/null

fi
gp=$b/viewer/gpuprof
if want torch_nvtx; then
# PyTorch's own NVTX (two NVTX copies in one process) must reach gpuprof.
"$gp" --trace --force -o "$out/torch_nvtx.json.gz" tests/torch/nvtx_torch.py >"$out/torch_nvtx.out" 2>"$out/torch_nvtx.err"
python3 tests/torch/check_torch_nvtx.py "$out/torch_nvtx.json.gz" "$out/torch_nvtx.out" >"$out/torch_nvtx.check" 2>&1
rc=$?
cat "$out/torch_nvtx.check" >>"$table"
verdict_rc $rc torch_nvtx
fi

if want clash; then
# torch.profiler in a traced program: it must run on, and our trace stay valid.
"$gp" --trace --force -o "$out/clash.json.gz" tests/torch/profiler_clash.py >"$out/clash.out" 2>"$out/clash.err"
clash_rc=$?
echo "clash rc=$clash_rc" >>"$out/clash.out"
python3 tests/torch/trace_counts.py clash "$out/clash.json.gz" >>"$out/clash.out" 2>&1
json_rc=$?
{ grep -h -E "GPUPROF_CLASH|clash" "$out/clash.out"; grep -h "gpuprof:" "$out/clash.err" | head -5; } | sed 's/^/torch.profiler clash: /' >>"$table"
# the program ran on (exit 0, its result right) and the trace is valid JSON
if [ $clash_rc -ne 0 ] || [ $json_rc -ne 0 ] || ! grep -q "GPUPROF_CLASH ok=1" "$out/clash.out"; then
	verdict FAIL "torch.profiler clash" "(program exit $clash_rc, trace check exit $json_rc)"
else
	verdict PASS "torch.profiler clash"
fi

fi

if want failures; then
	# When the job fails: each signal against the same loop unprofiled,
	# SIGKILL at ten moments and in the first second, os._exit and _exit,
	# CuPy's pool, JAX's arena, a loop that releases PyTorch's cache, out of
	# memory in both modes (tests/gpu/failures/run.py; FAILURES: its cases)
	python3 tests/gpu/failures/run.py "$gp" "$out/failures" ${FAILURES:+--only "$FAILURES"} \
		>"$out/failures.log" 2>&1
	rc=$?
	grep -h "^RESULT failures" "$out/failures.log" >>"$table"
	verdict_rc $rc failures
fi

if want ranks; then
	# Jobs of a rank per GPU (torchrun; NCCL, or gloo with two ranks sharing
	# the one GPU) traced into run directories: each rank's identity, its
	# one GPU, its peaks = what PyTorch measured in it, FSDP2's shards and
	# gathered parameters, NCCL's memory named, the stories of uneven and
	# growing ranks, one process on the host, the merged and aligned traces
	# (tests/gpu/ranks/check_ranks.py)
	python3 tests/gpu/ranks/check_ranks.py "$gp" "$out/ranks" >"$out/ranks.log" 2>&1
	rc=$?
	grep -h "^RESULT ranks" "$out/ranks.log" >>"$table"
	verdict_rc $rc ranks
fi

if want segments; then
	# PyTorch's segments and blocks as gpuprof lays them out (analyze --at,
	# the report's view of the cache) against torch.cuda.memory._snapshot(),
	# with the default allocator and with expandable segments
	# (tests/torch/check_segments.py)
	python3 tests/torch/check_segments.py "$gp" "$out/segments" >"$out/segments.log" 2>&1
	rc=$?
	grep -h "^RESULT segments" "$out/segments.log" >>"$table"
	verdict_rc $rc segments
fi

if want torch; then
	# Real models, traced in each mode and checked against PyTorch's own
	# numbers from the same run; kernels against torch.profiler's count.
	tm=tests/torch/train_models.py
	for m in gpt2 resnet50; do
		python3 $tm --model $m --steps 4 --count-kernels >"$out/$m.kref.out" 2>"$out/$m.kref.err"
		for mode in tensor native; do
			"$gp" --trace --force --mode $mode -o "$out/$m.$mode.json.gz" $tm --model $m --steps 4 \
				>"$out/$m.$mode.out" 2>"$out/$m.$mode.err"
			# a failed check keeps its trace (the logs leave the models' traces out)
			python3 tests/torch/check_torch_trace.py "$out/$m.$mode.json.gz" "$out/$m.$mode.out" \
				--mode $mode --kernels "$out/$m.kref.out" --label "$m.$mode" >>"$table" 2>&1
			rc=$?
			verdict_rc $rc "torch $m.$mode"
			[ $rc -eq 0 ] ||
				{ mkdir -p "$final/failed" && cp "$out/$m.$mode.json.gz" "$out/$m.kref.out" "$final/failed/"; }
			grep -h "gpuprof:" "$out/$m.$mode.err" | grep -v "trace written\|open it" | sed "s/^/$m.$mode: /" >>"$table"
		done
	done
fi

if want native; then
	# the default mode (native, gpuprof's hook on PyTorch's caching
	# allocator): every block and segment, checked against PyTorch's own
	# numbers of the same run (tests/torch/check_native.py); --stacks adds
	# each block's Python line. No --mode: the default must be native.
	# Rows: TAG|gpuprof options|program and arguments|check options
	cn=tests/torch/check_native.py
	while IFS='|' read -r tag opts prog checks; do
		# shellcheck disable=SC2086
		"$gp" --trace --force $opts -o "$out/native.$tag.json.gz" $prog \
			>"$out/native.$tag.out" 2>"$out/native.$tag.err" </dev/null
		# shellcheck disable=SC2086
		python3 $cn "$gp" "$out/native.$tag.json.gz" "$out/native.$tag.out" --label "native.$tag" $checks \
			>>"$table" 2>&1 </dev/null
		rc=$?
		verdict_rc $rc "native $tag"
		if [ $rc -ne 0 ]; then
			# the analysis comes back, not the trace (GPT-2's is large)
			mkdir -p "$final/failed"
			"$gp" analyze --json "$out/native.$tag.json.gz" >"$final/failed/native.$tag.analyze.json" 2>/dev/null </dev/null
			tail -n 5 "$out/native.$tag.err" | cut -c1-300 | sed "s/^/  native.$tag stderr: /" >>"$table"
		fi
		grep -h "gpuprof:" "$out/native.$tag.err" | grep -v "trace written\|open it" | cut -c1-300 |
			sed "s/^/  native.$tag: /" >>"$table"
	done <<'EOF'
gpt2||tests/torch/train_models.py --model gpt2 --steps 4|
gpt2.stacks|--stacks|tests/torch/train_models.py --model gpt2 --steps 4|--stacks
resnet50||tests/torch/train_models.py --model resnet50 --steps 4|
lightning||tests/torch/trainer_loop.py --steps 8|
checkpointed||tests/torch/checkpointed.py --steps 4|
outputs_leak|--stacks|samples/pytorch/outputs_list_leak.py --variant gpu|--stacks --leak samples/pytorch/outputs_list_leak.py:self.lm_head(
story.outputs_cpu||samples/pytorch/outputs_list_leak.py --variant cpu|
story.outputs_cpu.stacks|--stacks|samples/pytorch/outputs_list_leak.py --variant cpu|--stacks
story.inplace_out||samples/pytorch/inplace_vs_outofplace.py --variant outofplace|
story.inplace_in||samples/pytorch/inplace_vs_outofplace.py --variant inplace|
story.nozero||samples/pytorch/no_zero_grad.py --variant nozero|
story.zero||samples/pytorch/no_zero_grad.py --variant zero|
story.kept||samples/pytorch/tensors_kept_after_loop.py --variant keep|
story.kept_del||samples/pytorch/tensors_kept_after_loop.py --variant del|
story.kept_del.stacks|--stacks|samples/pytorch/tensors_kept_after_loop.py --variant del|--stacks
story.accum||samples/pytorch/grad_accumulation.py --variant accum|
story.bigbatch||samples/pytorch/grad_accumulation.py --variant bigbatch|
story.losses_graph||samples/pytorch/losses_with_graph.py --variant graph|
story.losses_item||samples/pytorch/losses_with_graph.py --variant item|
story.infer_grad||samples/pytorch/inference_no_grad.py --variant grad|
story.infer_nograd||samples/pytorch/inference_no_grad.py --variant nograd|
story.amp||samples/pytorch/amp_vs_fp32.py --variant amp|
story.fp32||samples/pytorch/amp_vs_fp32.py --variant fp32|
story.frag||samples/pytorch/fragmentation.py --variant default|
story.frag_exp||samples/pytorch/fragmentation.py --variant expandable|
story.too_large||samples/pytorch/batch_too_large.py|
EOF
	# an OOM PyTorch raised: batch_doubling.py traced (--stacks: the batch's
	# input is made outside any module) against the same script unprofiled
	python3 samples/pytorch/batch_doubling.py >"$out/native.doubling.plain.out" 2>&1 </dev/null
	"$gp" --trace --force --stacks -o "$out/native.doubling.json.gz" samples/pytorch/batch_doubling.py \
		>"$out/native.doubling.out" 2>"$out/native.doubling.err" </dev/null
	python3 $cn "$gp" "$out/native.doubling.json.gz" "$out/native.doubling.out" --label native.doubling --stacks \
		--oom "$out/native.doubling.plain.out" >>"$table" 2>&1
	rc=$?
	verdict_rc $rc "native batch_doubling"
	[ $rc -eq 0 ] || tail -n 5 "$out/native.doubling.err" | cut -c1-300 | sed 's/^/  native.doubling stderr: /' >>"$table"
	"$gp" analyze "$out/native.doubling.json.gz" 2>/dev/null | sed -n '/Out of memory/,/advice/p' | head -12 |
		sed 's/^/  native.doubling analyze: /' >>"$table"
fi

if want history; then
	# --torch-history: PyTorch's allocator history in native mode, checked
	# against PyTorch's own peaks and the fragmentation story's worst gap
	for m in gpt2 resnet50; do
		# the history is native mode's fallback where the allocator hook
		# cannot be had: tried here without the hook
		GPUPROF_TORCH_TRACKER=0 "$gp" --trace --force --mode native --torch-history -o "$out/$m.history.json.gz" \
			tests/torch/train_models.py --model $m --steps 4 >"$out/$m.history.out" 2>"$out/$m.history.err"
		python3 tests/torch/check_history.py "$gp" "$out/$m.history.json.gz" "$out/$m.history.out" $m >>"$table" 2>&1
		verdict_rc $? "history $m"
		grep -h "gpuprof:" "$out/$m.history.err" | grep -v "trace written\|open it\|native mode" | sed "s/^/$m.history: /" >>"$table"
	done
	GPUPROF_TORCH_TRACKER=0 "$gp" --trace --force --mode native --torch-history -o "$out/frag.history.json.gz" \
		samples/pytorch/fragmentation.py >"$out/frag.history.out" 2>"$out/frag.history.err"
	python3 tests/torch/check_history.py "$gp" "$out/frag.history.json.gz" "$out/frag.history.out" fragmentation >>"$table" 2>&1
	verdict_rc $? "history fragmentation"
	"$gp" analyze "$out/frag.history.json.gz" 2>&1 | grep -E "allocated|fragmentation" | sed 's/^/frag.history analyze: /' >>"$table"
fi

if want features; then
	# DataLoader workers (fork, spawn), AMP, checkpointing, torch.compile,
	# torchrun and python -m: naming and steps survive, one trace per CUDA process
	f=tests/torch/features.py
	for args in "--start fork" "--start spawn" "--compile --workers 0"; do
		tag=$(echo "$args" | tr -d ' -')
		"$gp" --trace --force -o "$out/feat.$tag.json.gz" $f $args >"$out/feat.$tag.out" 2>"$out/feat.$tag.err"
		python3 tests/torch/check_features.py "$out/feat.$tag.json.gz" "$out/feat.$tag.out" >>"$table" 2>&1
		rc=$?
		verdict_rc $rc "features $tag"
		[ $rc -eq 0 ] ||
			tail -n 8 "$out/feat.$tag.err" | cut -c1-300 | sed "s/^/  $tag stderr: /" >>"$table"
	done
	"$gp" --trace --force -o "$out/feat.torchrun.json.gz" -- torchrun --nproc-per-node 1 $f --workers 0 \
		>"$out/feat.torchrun.out" 2>"$out/feat.torchrun.err"
	# torchrun itself does not use CUDA: its worker writes feat.torchrun.<pid>.json.gz
	workers=0
	for t in "$out"/feat.torchrun.*.json.gz; do
		[ -f "$t" ] || continue
		workers=$((workers + 1))
		python3 tests/torch/check_features.py "$t" "$out/feat.torchrun.out" --quiet-extra 2>&1 |
			sed 's/^/torchrun worker: /' >>"$table"
		verdict_rc "${PIPESTATUS[0]}" "features torchrun worker $(basename "$t")"
	done
	[ $workers -gt 0 ] || verdict FAIL "features torchrun" "(no worker trace feat.torchrun.PID.json.gz)"
	grep -h 'gpuprof:' "$out/feat.torchrun.err" | cut -c1-200 | sed 's/^/torchrun: /' >>"$table"
	# native mode, no training steps: the sampler's gpuprof:torch.memory marks
	"$gp" --trace --force --mode native -o "$out/feat.marks.json.gz" tests/torch/memory_marks.py \
		>"$out/feat.marks.out" 2>&1
	marks=$(zcat "$out/feat.marks.json.gz" 2>/dev/null | grep -c 'torch.memory')
	echo "memory marks (native, no steps): $marks marks; $(grep -h 'gpuprof:' "$out/feat.marks.out" | grep -v 'trace written\|open it' | tr '\n' ' ' | cut -c1-200)" >>"$table"
	if [ "${marks:-0}" -gt 0 ]; then
		verdict PASS "features memory marks"
	else
		verdict FAIL "features memory marks" "(no gpuprof:torch.memory mark in the trace)"
	fi
	(cd tests/torch && "$gp" --trace --force -o "$out/feat.module.json.gz" -- python3 -m features --workers 0 \
		>"$out/feat.module.out" 2>"$out/feat.module.err")
	python3 tests/torch/check_features.py "$out/feat.module.json.gz" "$out/feat.module.out" 2>&1 |
		sed 's/^/python -m: /' >>"$table"
	verdict_rc "${PIPESTATUS[0]}" "features python -m"
fi

if want samples; then
	# the OOM stories of samples/pytorch, each run plainly: each story must show
	LOGDIR=$out/samples TIMEOUT=120 bash samples/pytorch/run_all.sh >"$out/samples.txt" 2>&1
	rc=$?
	tail -n 30 "$out/samples.txt" | sed 's/^/  /' >>"$table"
	verdict_rc $rc "samples/pytorch run_all"
fi

if want pip; then
	# pip install . on this machine, without network: the installed gpuprof
	# finds its recorder and hooks in the environment and records a sample
	bash tests/pip/test_pip_install.sh python3 "$b/samples/alloc_sizes" >"$out/pip.txt" 2>&1
	rc=$?
	tail -n 5 "$out/pip.txt" | sed 's/^/  /' >>"$table"
	verdict_rc $rc "pip install . (tests/pip/test_pip_install.sh)"
fi

if want noise; then
	# repeated runs of one program: how far their peaks differ (compare's tolerance)
	for m in gpt2 resnet50; do
		for mode in tensor native; do
			for i in $(seq "${GPUPROF_NOISE_RUNS:-3}"); do
				"$gp" --trace --force --mode $mode -o "$out/noise.$m.$mode.r$i.json.gz" \
					tests/torch/train_models.py --model $m --steps 5 >/dev/null 2>>"$out/noise.err"
				"$gp" analyze --json "$out/noise.$m.$mode.r$i.json.gz" >"$out/noise.$m.$mode.r$i.summary.json" \
					2>>"$out/noise.err"
			done
			echo "noise $m $mode:" >>"$table"
			python3 bench/compare_noise.py "$out"/noise.$m.$mode.r*.summary.json >>"$table" 2>&1
			"$gp" compare "$out/noise.$m.$mode.r1.summary.json" "$out/noise.$m.$mode.r2.summary.json" \
				>"$out/noise.$m.$mode.compare.txt" 2>&1
			rc=$?
			# two runs of one program must pass compare's default tolerance
			verdict_rc $rc "noise compare r1 r2 ($m $mode)" "$(head -1 "$out/noise.$m.$mode.compare.txt")"
		done
	done
fi

if want cost; then
	# per-event costs, CPU-bound: plain, then each gpuprof mode
	[ "${GPUPROF_COST_EVENTS:-1}" = 0 ] || {
	python3 tests/torch/hook_cost.py 2>&1 | grep GPUPROF_COST | sed 's/^/cost plain: /' >>"$table"
	for mode in cuda native tensor; do
		"$gp" --trace --force --mode $mode -o "$out/cost.$mode.json.gz" tests/torch/hook_cost.py 2>/dev/null |
			grep GPUPROF_COST | sed "s/^/cost gpuprof-$mode: /" >>"$table"
	done
	}
	# GPT-2 steps, one process, variants in turns (bench/hook_ab.py): the
	# hooks installed or not and the recorder's parts on or off
	# (gpuprof_bench_record), first in native mode, then in tensor mode.
	rounds=${GPUPROF_AB_ROUNDS:-10}
	# the GPU's clocks, power and throttle reasons while the A/B runs: a
	# power-capped GPU changes its clock, and with it every step time
	nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
		--format=csv,noheader,nounits -lms 500 >"$out/ab_clocks.csv" 2>&1 &
	smi=$!
	ab=${GPUPROF_AB_NATIVE:-none@none none@memory none@memory,kernels none@all,memory fwd,bwd,phase@all,memory fwd,bwd,phase@none fwd@all,memory}
	# shellcheck disable=SC2086
	"$gp" --trace --force --mode native -o "$out/hook_ab.json.gz" bench/hook_ab.py --model gpt2 --rounds "$rounds" $ab \
		2>>"$out/hook_ab.err" | sed 's/^HOOK_AB/A\/B native:/' >>"$table"
	# tensor mode: CUPTI's pool records cannot be switched in one process
	# (bench/launch_cost.py), so the recorder's parts here are its default
	ab=${GPUPROF_AB_TENSOR:-none@none none@memory none@memory,kernels,copies,api,launches,oom,nvtx fwd,bwd,phase@memory,kernels,copies,api,launches,oom,nvtx}
	if [ "$ab" != skip ]; then
		# shellcheck disable=SC2086
		"$gp" --trace --force --mode tensor -o "$out/hook_ab_tensor.json.gz" bench/hook_ab.py --model gpt2 \
			--rounds "$rounds" $ab 2>>"$out/hook_ab.err" | sed 's/^HOOK_AB/A\/B tensor:/' >>"$table"
	fi
	kill "$smi" 2>/dev/null
	python3 - "$out/ab_clocks.csv" >>"$table" 2>&1 <<'PY'
import collections, statistics, sys
rows = [l.split(", ") for l in open(sys.argv[1]) if l.count(",") >= 5]
def col(i):
    v = []
    for r in rows:
        try:
            v.append(float(r[i]))
        except ValueError:
            pass
    return v
for name, i in (("sm clock MHz", 1), ("power W", 3), ("temp C", 4)):
    v = col(i)
    if v:
        print("A/B GPU %s: min %.0f median %.0f max %.0f (%d samples)" % (name, min(v), statistics.median(v), max(v), len(v)))
reasons = collections.Counter(r[5].strip() for r in rows if len(r) > 5)
print("A/B GPU throttle reasons: " + ", ".join("%s x%d" % kv for kv in reasons.most_common(5)))
PY
	tail -n 5 "$out/hook_ab.err" | cut -c1-300 | sed 's/^/  hook_ab stderr: /' >>"$table"
fi

if want bench; then
	# GPT-2 step, each configuration against the same program unprofiled
	# with its own allocator, alternating in one run (bench/overhead.sh), and
	# the budget's verdict on the rounds (bench/pool_overhead.py --budget);
	# GPUPROF_BENCH_CONFIGS to bisect. overhead.txt lands in $OUT as the runs
	# end, so a call cut short still brings back its rounds to pool.
	configs=${GPUPROF_BENCH_CONFIGS:-plain=plain-native native=native stacks=native+GPUPROF_STACKS=1 tensor=tensor torchprof=torchprof-native history=history-native}
	# shellcheck disable=SC2086
	ROUNDS=${GPUPROF_BENCH_ROUNDS:-10} STEPS=${GPUPROF_BENCH_STEPS:-25} bash bench/overhead.sh "$gp" "$final/bench" \
		$configs >>"$table" 2>>"$out/bench.err"
	python3 bench/pool_overhead.py --against plain --budget "$final/bench/overhead.txt" 2>&1 |
		grep -E "^BUDGET_(CHECK|VERDICT)|^BUDGET " >>"$table"
	for f in "$final"/bench/*.json.gz; do
		[ -f "$f" ] && python3 tests/torch/trace_counts.py bench "$f" >>"$table" 2>&1
		rm -f "$f"
	done
fi

# What comes back: the table, one sample trace for samples/traces/, all logs.
cp "$b/tests/gpu/work/alloc_sizes.json.gz" "$final/alloc_sizes.h100.json.gz" 2>/dev/null
cp -r "$b/tests/gpu/work" "$out/gpu_work" 2>/dev/null
find "$out" -name '*.json.gz' -size +1M -delete
tar czf "$final/logs.tar.gz" --exclude='gpt2*.json.gz' --exclude='resnet50*.json.gz' -C "$final" logs && rm -rf "$out"
summary
status=$?
echo "===== gpuprof GPU suite ====="
cat "$table"
exit $status
