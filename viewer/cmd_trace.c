/* gpuprof --trace: runs PROGRAM with the recorder injected through CUDA's own
 * hook (CUDA_INJECTION64_PATH, read by the driver when the program first uses
 * CUDA), then makes sure every trace the run left is complete and says where
 * it is.
 *
 * The launcher stays out of the program's way: it execs PROGRAM as given,
 * leaves stdin/stdout/stderr to it, writes only "gpuprof: " lines on stderr,
 * and exits with the program's status. Anything that prevents recording (no
 * driver, a recorder that cannot load) is reported and the program runs
 * anyway; only bad usage stops it from running.
 *
 * This file is the command's flow; each step is one file of viewer/trace/
 * (see launch.h there). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_figures.h"
#include "cli.h"
#include "env_vars.h"
#include "trace/launch.h"

static int trace_main(int argc, char **argv)
{
	struct gp_trace_settings s = { 0 };
	struct gp_trace_run r = { 0 };
	int err, wstatus = 0, status;

	status = gp_trace_options(argc, argv, &s);
	if (status == GP_TRACE_HELP) {
		gp_print_command_help(&gp_cmd_trace);
		return GP_EXIT_OK;
	}
#ifdef GPUPROF_WITHOUT_RECORDER
	/* Running PROGRAM unrecorded would look like a run with nothing to
	 * record: said before anything runs (viewer/CMakeLists.txt). */
	gp_msg("this gpuprof was built without the recorder (no CUDA Toolkit or "
	       "-DGPUPROF_RECORDER=OFF): --trace cannot record; it reads traces only");
	return GP_EXIT_USAGE;
#endif
	if (status)
		return status;
	r.name = s.program[0];

	/* everything that can refuse the run comes before anything is changed */
	status = GP_EXIT_USAGE;
	err = gp_trace_resolve_output(&s, &r);
	if (err)
		goto cleanup;
	err = gp_trace_resolve_program(&s, &r);
	if (err)
		goto cleanup;
	status = GP_EXIT_FAIL;
	err = gp_trace_setup_recorder(&r);
	if (err)
		goto cleanup;
	if (r.recorder) {
		err = gp_trace_setup_mode(&s, &r);
		if (err)
			goto cleanup;
	}
	if (r.recorder && s.trace_cap && setenv(GP_ENV_TRACE_CAP, s.trace_cap, 1) != 0)
		goto cleanup;
	if (r.recorder && s.window_s) {
		char v[24];

		r.flight = true;
		snprintf(v, sizeof(v), "%ld", s.window_s);
		if (setenv(GP_ENV_WINDOW_S, v, 1) != 0 || (s.dump_at && setenv(GP_ENV_DUMP_AT, s.dump_at, 1) != 0) ||
		    (s.dump_steps && setenv(GP_ENV_DUMP_STEPS, s.dump_steps, 1) != 0))
			goto cleanup;
	}
	/* without a recorder the old trace stays, as nothing would replace
	 * it; with one, it is set aside until a new trace is there */
	if (r.recorder && r.replace_output) {
		err = gp_trace_set_aside(&r);
		if (err)
			goto cleanup;
	}

	err = gp_trace_run_program(&r, &wstatus);
	if (err) {
		status = err > 0 ? GP_EXIT_USAGE : GP_EXIT_FAIL;
		goto cleanup;
	}
	status = gp_trace_exit_status(&r, wstatus);
	if (r.recorder)
		gp_trace_report(&r, wstatus);
cleanup:
	gp_trace_settle_aside(&r);
	free(r.py_argv);
	free(r.recorder);
	free(r.output);
	free(r.run_dir);
	return status;
}

const struct gp_command gp_cmd_trace = {
	.name = "trace",
	.summary = "run PROGRAM and record its GPU memory activity to a trace",
	.usage = "  gpuprof --trace [-o PATH] [--force] [--mode MODE] [--ops] [--torch-history]\n"
		 "                 [--stacks] [--window SECONDS] [--dump-at BYTES|PCT%]\n"
		 "                 [--dump-steps A-B] [--trace-cap SIZE] [--python PYTHON]\n"
		 "                 [--] PROGRAM [ARGS...]\n",
	.options =
		"  Options go before PROGRAM; what follows PROGRAM is passed to it.\n"
		"  -o, --output PATH      write the trace to PATH (default: in the current\n"
		"                         directory, gpuprof-PROGRAM-YYYYmmdd-HHMMSS.json.gz);\n"
		"                         a child process that uses CUDA writes STEM.PID.json.gz\n"
		"                         for a PATH of STEM.json.gz\n"
		"  -o, --output RUN/      a run directory (made if missing; an existing\n"
		"                         directory is one too): every process writes\n"
		"                         rankR.PID.json.gz (proc.HOST.PID.json.gz without a\n"
		"                         rank), and the launcher a manifest. The default for\n"
		"                         torchrun, mpirun, srun, accelerate, deepspeed:\n"
		"                         gpuprof-PROGRAM-YYYYmmdd-HHMMSS/\n"
		"  -f, --force            replace PATH if it exists (a symbolic link is\n"
		"                         replaced itself; what it points to is left alone);\n"
		"                         for RUN/, remove the earlier run's traces in it\n"
		"      --mode MODE        native (the default for Python programs): PyTorch's\n"
		"                         own caching allocator, every tensor and segment of\n"
		"                         it, modules, phases and steps named; tensor: every\n"
		"                         tensor, PyTorch's allocator switched to\n"
		"                         cudaMallocAsync (for programs that use that backend);\n"
		"                         cuda: no Python hooks (the default for other\n"
		"                         programs)\n"
		"      --stacks           native mode: every tensor also names the Python\n"
		"                         stack that made it (file, line, function); without\n"
		"                         it, only those no module names (CPython 3.11-3.13)\n"
		"      --window SECONDS   a flight recorder: keep the last SECONDS in full in\n"
		"                         memory and write them at the end, on SIGUSR1 (the\n"
		"                         program goes on) and after an out-of-memory error\n"
		"                         (STEM.dumpN.json.gz beside PATH); each opens with\n"
		"                         every block alive then, as it was made; PATH holds\n"
		"                         the outline of every step (peaks, holders) and the\n"
		"                         last window. Also a dump between cudaProfilerStart\n"
		"                         and cudaProfilerStop. SIGUSR1 to gpuprof: every\n"
		"                         process of a run directory dumps at the same step\n"
		"      --dump-at BYTES|PCT%  with --window (60 if not given): a dump when the\n"
		"                         process's device memory crosses BYTES (60G) or PCT%\n"
		"                         of the device\n"
		"      --dump-steps A-B   with --window (60 if not given): a dump of steps A\n"
		"                         to B whole, from step A's start, at step B's mark\n"
		"      --trace-cap SIZE   without --window: the trace holds everything up to\n"
		"                         SIZE compressed (default 1GiB), then goes on as a\n"
		"                         flight recorder of the last 60 s and the outline of\n"
		"                         every step, the start kept as STEM.dump0.json.gz;\n"
		"                         off: no cap\n"
		"      --ops              also record PyTorch ops (aten::...) as ranges\n"
		"      --torch-history    native mode where the allocator hook cannot be had (no\n"
		"                         C++ compiler, GPUPROF_TORCH_TRACKER=0): PyTorch's\n"
		"                         allocated bytes after every allocation and free (its\n"
		"                         allocator's own history, written at exit) instead\n"
		"                         of sampled ones\n"
		"      --python PYTHON    run PROGRAM.py with PYTHON (default: $GPUPROF_PYTHON,\n"
		"                         else python3)\n"
		"  -h, --help             this help\n"
		"      --                 end of gpuprof's options\n",
	/* the figures: bench/RESULTS.md's, through bench_figures.h */
	.modes_title = "MODES (a GPT-2 training step's cost against the same program unprofiled,\n"
		       "median of the rounds on an H100: bench/RESULTS.md)",
	.modes =
		"  native     PyTorch's own allocator: every tensor, segment and   " GP_COST_NATIVE "\n"
		"             out-of-memory error, exact; module, phase, step,\n"
		"             category; the line of what no module names\n"
		"  --stacks   native, and every tensor's Python line                " GP_COST_STACKS "\n"
		"  tensor     every tensor, the allocator switched to               " GP_COST_TENSOR "\n"
		"             cudaMallocAsync (another allocator, other peaks)\n"
		"  (torch.profiler with profile_memory: " GP_COST_TORCH_PROFILER " in the same rounds)\n"
		"  cuda       allocations, kernels, copies, sets, NVTX; no Python   " GP_COST_CUDA "\n"
		"             hooks (measured in earlier rounds)\n",
	.examples =
		"  gpuprof --trace train.py --epochs 1\n"
		"      run python3 train.py --epochs 1 and record it\n"
		"  gpuprof --trace -o run.json.gz -- ./app --flag\n"
		"      record ./app --flag to run.json.gz\n"
		"  gpuprof --trace --stacks train.py\n"
		"      also the Python line that made each tensor\n"
		"  gpuprof --trace --window 60 train.py      (then: kill -USR1 PID)\n"
		"      keep the last minute; dump it when asked, at an OOM and at the end\n"
		"  gpuprof --trace --dump-steps 100-101 --dump-at 90% train.py\n"
		"      steps 100 and 101 whole, and the minute before memory reaches 90%\n"
		"  gpuprof --trace -o run/ -- torchrun --nproc-per-node 8 train.py\n"
		"      every rank's trace in run/; then: gpuprof analyze run/\n"
		"  srun gpuprof --trace -o /shared/run/ -- python train.py\n"
		"      under Slurm, one launcher per task, one run directory on a shared\n"
		"      file system\n",
	.environment =
		"  GPUPROF_INJECT_LIB     the recorder library to inject (default: the one\n"
		"                         installed with gpuprof, or built beside it)\n"
		"  GPUPROF_PYTHON         the interpreter for PROGRAM.py (default: python3)\n"
		"  GPUPROF_CACHE          where native mode's allocator hook is built for\n"
		"                         the program's torch (default:\n"
		"                         $XDG_CACHE_HOME/gpuprof, else ~/.cache/gpuprof)\n"
		"  GPUPROF_TORCH_TRACKER  0: native mode without the allocator hook\n"
		"                         (segments, sampled allocated bytes)\n"
		"  GPUPROF_TORCH_HISTORY_ENTRIES\n"
		"                         --torch-history: the entries PyTorch's allocator keeps\n"
		"                         (default 1000000; the oldest go first)\n",
	.exit_status =
		"  PROGRAM's exit status, or 128+N when PROGRAM was killed by signal N.\n"
		"  gpuprof's own: 1 a failure to set up the recording, 2 bad usage, or PROGRAM\n"
		"  could not be started; a \"gpuprof: \" line on stderr tells them from\n"
		"  PROGRAM's own status.\n",
	.run = trace_main,
};
