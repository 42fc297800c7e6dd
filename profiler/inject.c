/* Entry point of the injected recorder. CUDA calls InitializeInjection from
 * inside cuInit when CUDA_INJECTION64_PATH names this library. We open the
 * trace, subscribe to CUPTI, start the writer thread and return; at process
 * exit the trace is finished. Any failure says one "gpuprof:" line on stderr
 * and leaves the program running without us. */
#include "alloc_patch.h"
#include "api_callbacks.h"
#include "api_select.h"
#include "config.h"
#include "cupti_buffers.h"
#include "exit_patch.h"
#include "dump_when.h"
#include "flight.h"
#include "export.h"
#include "host_events.h"
#include "signals.h"
#include "state.h"
#include "trace_names.h"
#include "trace_writer.h"
#include "writer_thread.h"

#include <cupti.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static CUpti_SubscriberHandle subscriber;

static void fail(const char *what, CUptiResult r)
{
	const char *msg = NULL;
	if (cuptiGetResultString(r, &msg) != CUPTI_SUCCESS || !msg)
		msg = "unknown CUPTI error";
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		gp_rec_say("another CUDA profiler holds CUPTI in this process (nsys, ncu, "
			   "torch.profiler?); gpuprof records nothing, the program runs on");
	else
		gp_rec_say("%s failed (%s); gpuprof records nothing, the program runs on", what, msg);
}

/* In a run directory (GPUPROF_RUN_DIR), every process names its file by
 * its rank or its host, and its pid (exporters/trace_names.h). Else the
 * launched process writes GPUPROF_OUTPUT itself; every other process
 * writes its own file beside it; without GPUPROF_OUTPUT
 * (CUDA_INJECTION64_PATH set by hand), gpuprof-<pid>.json.gz in the
 * current directory. */
static int trace_path(const struct gp_rec_config *cfg, char *out, size_t cap)
{
	const char *base = cfg->output;
	const char *root = cfg->root_pid;
	const char *run_dir = cfg->run_dir;
	pid_t pid = getpid();
	int n;

	if (run_dir && *run_dir) {
		char host[256] = "";
		gethostname(host, sizeof(host) - 1);
		return gp_run_trace_path(out, cap, run_dir, cfg->rank, host, pid);
	}
	if (!base || !*base)
		n = snprintf(out, cap, "gpuprof-%d" GP_TRACE_SUFFIX, (int)pid);
	else if (root && atol(root) == (long)pid)
		n = snprintf(out, cap, "%s", base);
	else
		return gp_child_trace_path(out, cap, base, pid);
	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *cbdata)
{
	gp_callbacks_handler(userdata, (int)domain, cbid, cbdata);
}

/* How long an exit waits for the trace to be finished
 * (GPUPROF_EXIT_WAIT_MS, set at start): exit() in its atexit handler,
 * _exit() in on_exit_call. A program's exit is never held longer: the trace
 * is then cut short at its last flush, which gpuprof recover repairs. */
static int exit_finish_ms;

static void on_exit_handler(void)
{
	if (getpid() != gp_rec.pid)
		return; /* a fork()ed child calling exit(): the trace is not its own */
	int expected = GP_REC_RUNNING;
	if (!atomic_compare_exchange_strong(&gp_rec.state, &expected, GP_REC_STOPPING))
		return;
	gp_writer_stop(1, exit_finish_ms);
}

/* exit_patch.h's hook: the program ends with _exit() or _Exit() (Python's
 * os._exit()), which run no atexit handler. The writer finishes the trace
 * as at exit(), and this thread waits for it, bounded; nothing here takes
 * a lock, so that any thread may call it, holding whatever it holds, or a
 * signal handler. A vfork()ed child shares our memory: it must touch
 * nothing, so the pid comes first. */
static void on_exit_call(int status)
{
	(void)status; /* the real _exit gets it next */
	if (getpid() != gp_rec.pid)
		return; /* a child: the trace is its parent's */
	/* a signal from outside being finished ends the process first */
	gp_sig_hold_exit();
	int expected = GP_REC_RUNNING;
	int err;
	if (atomic_compare_exchange_strong(&gp_rec.state, &expected, GP_REC_STOPPING))
		err = gp_writer_finish_for_exit(exit_finish_ms);
	else if (expected == GP_REC_STOPPING)
		err = gp_writer_wait_finished(exit_finish_ms); /* exit() on another thread */
	else
		return;
	if (err == -ETIMEDOUT)
		gp_rec_say("the trace writer did not finish in %d ms; the trace is cut short "
			   "(run gpuprof recover on it)", exit_finish_ms);
}

/* How long a signal handler waits for the trace (GPUPROF_SIGNAL_WAIT_MS,
 * set at start; by default 5 s): long enough to flush CUPTI and compress
 * the rest (well under a second when the writer keeps up), short beside the
 * grace that schedulers give between SIGTERM and SIGKILL (Slurm's KillWait
 * and Kubernetes' default: 30 s). */
static int signal_finish_ms, signal_flush_ms = 1000;

/* signals.h's hook, for a watched signal: in its handler, or for one sent
 * from outside on signals.c's own thread while the program runs on. A
 * program dying of it gets its trace finished (the end says the signal);
 * one handling it gets a flush, so that the trace holds everything up to
 * the signal even if its handler ends the process without exit(). */
static void on_signal_hook(int sig, int ends)
{
	if (getpid() != gp_rec.pid || !gp_rec_running())
		return; /* a fork()ed child, or no recording */
	if (!ends) {
		gp_writer_flush_now(signal_flush_ms);
		return;
	}
	int expected = GP_REC_RUNNING;
	if (!atomic_compare_exchange_strong(&gp_rec.state, &expected, GP_REC_STOPPING))
		return;
	gp_writer_finish_for_signal(sig, signal_finish_ms);
}

static void on_fork_child(void)
{
	/* The trace file, the writer thread and the locks belong to the parent. */
	atomic_store(&gp_rec.state, GP_REC_FORKED);
}

/* Memory records are the reason gpuprof exists; without the others the
 * trace is poorer but still worth having. */
static const struct {
	CUpti_ActivityKind kind;
	unsigned part; /* GP_REC_*; 0: always */
	const char *what;
} kinds[] = {
	{ CUPTI_ACTIVITY_KIND_MEMORY2, GP_REC_MEMORY, "memory allocations" },
	{ CUPTI_ACTIVITY_KIND_DEVICE, 0, "device properties" },
	{ CUPTI_ACTIVITY_KIND_MEMORY_POOL, GP_REC_POOLS, "memory pools" },
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, GP_REC_KERNELS, "kernels" },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, GP_REC_COPIES, "copies" },
	{ CUPTI_ACTIVITY_KIND_MEMSET, GP_REC_COPIES, "sets" },
};

static int kind_wanted(size_t i)
{
	unsigned live = gp_rec_live();
	if (kinds[i].kind == CUPTI_ACTIVITY_KIND_MEMORY2)
		return gp_rec_memory_records(live);
	return !kinds[i].part || (live & kinds[i].part);
}

/* The memory records are required where they are the allocations; beside the
 * callbacks they add only module globals, and the trace is whole without. */
static int kind_required(size_t i)
{
	return kinds[i].kind == CUPTI_ACTIVITY_KIND_MEMORY2 && !gp_rec_by_callbacks(gp_rec_live());
}

/* Without pool records the callbacks record allocations and frees
 * (api_callbacks.c). CUPTI 13.0 was seen to write stream-ordered ones into
 * its memory records all the same when its pool records were never on,
 * with their cost (bench/op_cost: +2-3 µs per allocation and free); after
 * pool records were turned on and off again it wrote no memory record of an
 * API's allocation at all, stream-ordered or not, only module globals: so on
 * and off, whenever the memory records are (re)enabled that way. Should a
 * CUPTI still write them, the decoder skips and counts them
 * (cupti_decode.c). */
static void quiet_api_memory_records(void)
{
	unsigned live = gp_rec_live();
	if (gp_rec_by_callbacks(live) && gp_rec_memory_records(live) &&
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL) == CUPTI_SUCCESS)
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
}

/* Enables the activity kinds the live parts want and disables the others
 * (after torch.profiler, or for gpuprof_bench_record). 0 or the CUptiResult
 * of a required kind that failed. */
static int apply_kinds(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		CUptiResult r = kind_wanted(i) ? cuptiActivityEnable(kinds[i].kind)
					       : cuptiActivityDisable(kinds[i].kind);
		if (r != CUPTI_SUCCESS && kind_required(i))
			return (int)r;
	}
	quiet_api_memory_records();
	return 0;
}

static int start(void)
{
	char path[4096];
	struct gp_trace_writer *tw = NULL;
	struct gp_flight *flight = NULL;
	const struct gp_rec_config *cfg;
	CUptiResult r;
	int fd = -1, err;

	gp_rec.pid = getpid();
	err = gp_rec_config_load();
	if (err) {
		gp_rec_say("out of memory; not recording");
		return err;
	}
	cfg = gp_rec_config();
	atomic_store(&gp_rec_live_parts, cfg->parts | GP_REC_MEMORY);
	err = trace_path(cfg, path, sizeof(path));
	if (err) {
		gp_rec_say("trace path too long; not recording");
		return err;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		gp_rec_say("cannot create %s: %s; not recording", path, strerror(errno));
		return err;
	}
	if (gp_hev_init(cfg->host_events) != 0 || gp_bufs_init(2u << 20, cfg->buffer_bytes) != 0) {
		err = -ENOMEM;
		gp_rec_say("out of memory; not recording");
		goto fail_file;
	}

	r = cuptiSubscribe(&subscriber, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		fail("cuptiSubscribe", r);
		err = -EBUSY;
		goto fail_file;
	}
	r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r == CUPTI_SUCCESS)
		r = (CUptiResult)gp_bufs_register();
	if (r != CUPTI_SUCCESS) {
		fail("registering CUPTI buffers", r);
		err = -EIO;
		goto fail_subscribed;
	}
	gp_rec.ts_base = gp_now();

	if (cfg->window_s > 0) {
		struct gp_flight_when when = { cfg->dump_at_bytes, cfg->dump_at_permille, cfg->dump_step_first,
					       cfg->dump_step_last, (unsigned)cfg->seal_ms, cfg->run_dir, 0 };

		err = gp_flight_new(&flight, fd, path, gp_rec.pid, cfg->window_s, cfg->ring_bytes, &when, &tw);
	} else if (cfg->trace_cap_bytes) {
		/* the default trace, whole up to its cap, then a flight recorder */
		struct gp_flight_when when = { 0 };
		int keep = dup(fd); /* for the trace without a cap, if that fails */

		when.seal_ms = (unsigned)cfg->seal_ms;
		when.cap_bytes = cfg->trace_cap_bytes;
		err = gp_flight_new(&flight, fd, path, gp_rec.pid, GP_FLIGHT_DEFAULT_WINDOW_S, cfg->ring_bytes, &when,
				    &tw);
		if (err && keep >= 0) {
			gp_rec_say("the trace's size cap is off (%s): the trace is written whole", strerror(-err));
			err = gp_tw_open_fd(&tw, keep, 1);
			keep = -1;
		}
		if (keep >= 0)
			close(keep);
	} else {
		err = gp_tw_open_fd(&tw, fd, 1);
	}
	fd = -1; /* handed over to tw (or flight), closed with it even on failure */
	if (err) {
		gp_rec_say("cannot start the trace: %s", strerror(-err));
		goto fail_subscribed;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!kind_wanted(i))
			continue;
		r = cuptiActivityEnable(kinds[i].kind);
		if (r == CUPTI_SUCCESS)
			continue;
		if (kind_required(i)) {
			fail("enabling CUPTI memory activity", r);
			err = -EIO;
			goto fail_activity;
		}
		const char *msg = NULL;
		cuptiGetResultString(r, &msg);
		gp_rec_say("CUPTI cannot record %s here (%s); the trace will lack them",
			   kinds[i].kind == CUPTI_ACTIVITY_KIND_MEMORY2 ? "module globals" : kinds[i].what,
			   msg ? msg : "error");
	}
	quiet_api_memory_records();
	gp_api_select_apply(gp_rec_live());
	if (gp_rec_by_callbacks(gp_rec_live()))
		gp_alloc_patch_start(subscriber);
	r = (CUptiResult)gp_callbacks_enable(subscriber, gp_rec_live(), gp_alloc_patch_active());
	if (r != CUPTI_SUCCESS) {
		fail("enabling CUPTI callbacks", r);
		err = -EIO;
		goto fail_activity;
	}
	/* CUPTI's own worker also flushes full buffers; the writer forces the rest. */
	cuptiActivityFlushPeriod(500);

	atomic_store(&gp_rec.state, GP_REC_RUNNING);
	err = gp_writer_start(tw, flight);
	if (err) {
		gp_rec_say("cannot start the writer thread: %s", strerror(-err));
		atomic_store(&gp_rec.state, GP_REC_FAILED);
		goto fail_activity;
	}
	exit_finish_ms = cfg->exit_wait_ms;
	atexit(on_exit_handler);
	/* quick_exit() runs these instead of atexit's */
	at_quick_exit(on_exit_handler);
	pthread_atfork(NULL, NULL, on_fork_child);
	/* where it fails, _exit() leaves the trace cut short at its last flush */
	gp_exit_start(on_exit_call);
	/* glibc loads the unwinder at the first backtrace(): here, not in a
	 * CUPTI callback (api_callbacks.c's caller_object) */
	void *frame[2];
	backtrace(frame, 2);
	signal_finish_ms = cfg->signal_wait_ms;
	if (cfg->signals)
		gp_sig_start(on_signal_hook);
	return 0;

fail_activity:
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		cuptiActivityDisable(kinds[i].kind);
	gp_tw_abandon(tw);
	gp_flight_free(flight);
	unlink(path);
fail_subscribed:
	cuptiUnsubscribe(subscriber);
fail_file:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return err;
}

/* Called by gpuprof's PyTorch hooks (ctypes) before torch.profiler starts:
 * its buffer callbacks will hand CUPTI buffers that gpuprof did not zero, so
 * CUPTI must zero them itself again. gpuprof_reclaim_cupti() undoes it. */
GP_EXPORT int gpuprof_yield_cupti(void)
{
	if (gp_rec_running())
		gp_bufs_zeroed(0);
	return 0;
}

/* Called by gpuprof's PyTorch hooks (ctypes) after torch.profiler stops:
 * it registered its own buffer callbacks and disabled the activity kinds it
 * used, some of them ours. 0 or a CUptiResult. */
GP_EXPORT int gpuprof_reclaim_cupti(void)
{
	if (!gp_rec_running())
		return 0;
	CUptiResult r = (CUptiResult)gp_bufs_register();
	if (r != CUPTI_SUCCESS)
		return (int)r;
	/* Kinds it left on that gpuprof does not record would now fill gpuprof's
	 * buffers (memory pool records would record stream-ordered allocations a
	 * second time, besides the callbacks): off. */
	apply_kinds();
	gp_api_select_apply(gp_rec_live());
	return 0;
}

/* A mark of the recorder's own in the trace, on the calling thread. */
static void push_mark(const char *text)
{
	struct gp_host_ev ev;
	memset(&ev, 0, sizeof(ev));
	ev.ts = gp_now();
	ev.type = GP_HEV_MARK;
	ev.tid = gp_gettid();
	gp_hev_push(&ev, text, strlen(text));
}

/* For bench/ (hook_ab.py): turns parts of the recording off and on while the
 * program runs, so that what each part costs is measured in one process,
 * where run-to-run noise does not hide a 1% effect. parts: GPUPROF_RECORD's
 * names plus "memory" and "none". A mark "gpuprof:bench.record <parts>"
 * says it in the trace: what happened while a part was off is missing from
 * it, so such a trace is for timing, not for analysis. 0 or -errno, or a
 * CUptiResult. */
GP_EXPORT int gpuprof_bench_record(const char *parts)
{
	if (!gp_rec_running())
		return -ENODEV;
	if (!parts)
		return -EINVAL;
	unsigned want = gp_rec_parts_parse("gpuprof_bench_record", parts);
	atomic_store(&gp_rec_live_parts, want);
	int err = apply_kinds();
	if (err)
		return err;
	gp_api_select_apply(want);
	err = gp_callbacks_enable(subscriber, want, gp_alloc_patch_active());
	if (err)
		return err;
	char text[160];
	snprintf(text, sizeof(text), "gpuprof:bench.record %s", parts);
	push_mark(text);
	return 0;
}

GP_EXPORT int InitializeInjection(void)
{
	static atomic_flag once = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&once))
		return 1;
	int s = atomic_load(&gp_rec.state);
	if (s == GP_REC_FORKED)
		return 1;
	if (start() != 0)
		atomic_store(&gp_rec.state, GP_REC_FAILED);
	/* Returning success either way: a failed recorder must not fail cuInit. */
	return 1;
}
