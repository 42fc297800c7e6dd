/* The writer thread: every CUPTI buffer and host event is decoded, encoded
 * and compressed here, off the program's threads.
 *
 * Every tick (GPUPROF_FLUSH_MS, at most 1 s) the trace file is flushed.
 * Every GPUPROF_CUPTI_FLUSH_MS CUPTI is asked for its completed buffers, so
 * a memory record older than the flush before last has arrived; counters are
 * advanced up to there (the watermark). */
#include "writer_thread.h"

#include "alloc_patch.h"
#include "config.h"
#include "cupti_buffers.h"
#include "exit_patch.h"
#include "flight.h"
#include "gz_sink.h"
#include "signals.h"
#include "json_buf.h"
#include "writer_ctx.h"

#include <cupti.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct gp_writer_ctx ctx;
static pthread_t thread;
/* The flight recorder, when on: ctx.tw writes into its ring */
static struct gp_flight *flight;
/* Read by any thread (a signal's flush, an exit) while an exit's
 * gp_writer_stop clears it: atomic. Set after thread, so that a thread that
 * sees it set sees thread too. */
static _Atomic int thread_started;
static _Atomic int stop_requested;
static _Atomic unsigned finished;
/* The file's flush period (GPUPROF_FLUSH_MS): a program killed with
 * SIGKILL, where nothing of the recorder runs, leaves what was flushed.
 * Host events (steps, ranges, allocations by the callbacks and PyTorch's
 * allocator, failures) are decoded by the tick after them, so a killed
 * program loses about one tick of them, well under 0.5 s, from the first
 * tick on; GPU work's records come with CUPTI's flush (cupti_flush_ms) and
 * are in the file at its tick. Set at start, as all three below, from the
 * configuration (config.h). */
static int flush_ms;
static int clean_exit;
/* The signal the program is dying of (signals.h), 0 at a normal exit:
 * set before stop_requested. */
static _Atomic int end_signal;
/* Flushes asked for by a signal the program handles (gp_writer_flush_now)
 * and made: the writer makes one whole tick when asked > made. */
static _Atomic unsigned flushes_asked, flushes_made;
/* How CUPTI is asked for its buffers, GPUPROF_FLUSH: default (completed
 * buffers), forced (also records of kernels still running: measured to lose
 * 387-517 of 21051 GPT-2 kernels, which come with no end time), none (CUPTI's
 * own periodic flush only: every memory record then arrives late for the
 * counters). Measured on GPT-2 (bench/RESULTS.md): a default flush every
 * 500 ms costs the step about 8%, a forced one about 2%. It runs every
 * GPUPROF_CUPTI_FLUSH_MS (500 ms, the setting the GPU suite passed with;
 * a longer period is cheaper and not yet measured). flush_flag: CUPTI's
 * flag, -1 for none. */
static int flush_flag;
static int cupti_flush_ms;

static void drain(struct gp_writer_ctx *w)
{
	struct gp_cupti_buf *b = gp_bufs_take_completed();
	while (b) {
		struct gp_cupti_buf *next = b->next;
		gp_decode_cupti_buffer(w, b->data, b->valid);
		gp_bufs_release(b);
		b = next;
	}
	struct gp_host_ev *evs;
	size_t n = gp_hev_take(&evs);
	gp_decode_host_events(w, evs, n);
}

static void note_drops(struct gp_writer_ctx *w, uint64_t *seen, uint64_t now)
{
	static const char *const what[] = { "cupti_records", "cupti_buffers", "host_events" };
	uint64_t cur[3] = {
		atomic_load(&gp_rec.dropped_cupti),
		atomic_load(&gp_rec.dropped_buffers),
		atomic_load(&gp_rec.dropped_host),
	};
	for (int i = 0; i < 3; i++) {
		if (cur[i] == seen[i])
			continue;
		gp_tw_begin(w->tw, GP_PH_DROPPED, GP_EV_DROPPED, GP_CAT_GPUPROF, w->host_pid, 0, gp_rel_ts(now));
		gp_tw_field_str(w->tw, GP_T_S, "g");
		gp_tw_args_begin(w->tw);
		gp_tw_arg_str(w->tw, GP_F_WHAT, what[i]);
		gp_tw_arg_u64(w->tw, GP_F_COUNT, cur[i] - seen[i]);
		gp_tw_end(w->tw);
		seen[i] = cur[i];
	}
}

/* Tells readers that every record older than ts is already in the file, so
 * they can sort with a bounded window instead of reading everything first. */
static void write_watermark(struct gp_writer_ctx *w, uint64_t ts)
{
	gp_tw_begin(w->tw, GP_PH_WATERMARK, GP_EV_WATERMARK, GP_CAT_GPUPROF, w->host_pid, 0, gp_rel_ts(ts));
	gp_tw_field_str(w->tw, GP_T_S, "g");
	gp_tw_end(w->tw);
}

/* How stream-ordered allocations are captured now (alloc_patch.c). */
static void write_alloc_capture(struct gp_writer_ctx *w, const struct gp_alloc_capture *cap, uint64_t now)
{
	gp_tw_begin(w->tw, GP_PH_ALLOC_CAPTURE, GP_EV_ALLOC_CAPTURE, GP_CAT_GPUPROF, w->host_pid, 0, gp_rel_ts(now));
	gp_tw_field_str(w->tw, GP_T_S, "g");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_PATCHED, cap->slots.patched);
	gp_tw_arg_u64(w->tw, GP_F_LEFT, cap->slots.left);
	gp_tw_arg_u64(w->tw, GP_F_OTHERS, cap->slots.others);
	gp_tw_arg_bool(w->tw, GP_F_DRIVER_CALLBACKS, !cap->callbacks_off);
	if (cap->slots.first_unpatched[0])
		gp_tw_arg_str(w->tw, GP_F_FIRST_UNPATCHED, cap->slots.first_unpatched);
	gp_tw_end(w->tw);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Milliseconds from now to when, at most most: the writer wakes at its
 * tick, not up to its wait later. */
static int ms_until(uint64_t when, int most)
{
	uint64_t now = mono_ms();
	if (now >= when)
		return 0;
	return when - now < (uint64_t)most ? (int)(when - now) : most;
}

static void write_end(struct gp_writer_ctx *w)
{
	struct gp_memc_stats ms;
	gp_memc_get_stats(w->mc, &ms);
	gp_tw_begin(w->tw, GP_PH_END, GP_EV_END, GP_CAT_GPUPROF, w->host_pid, 0, gp_rel_ts(gp_now()));
	gp_tw_field_str(w->tw, GP_T_S, "g");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_bool(w->tw, GP_F_CLEAN, clean_exit);
	gp_tw_arg_bool(w->tw, GP_F_RECOVERED, 0);
	int sig = atomic_load(&end_signal);
	if (sig)
		gp_tw_arg_i64(w->tw, GP_F_SIGNAL, sig);
	gp_tw_arg_u64(w->tw, GP_F_DROPPED_CUPTI,
		      atomic_load(&gp_rec.dropped_cupti) + atomic_load(&gp_rec.dropped_buffers));
	gp_tw_arg_u64(w->tw, GP_F_DROPPED_HOST, atomic_load(&gp_rec.dropped_host));
	gp_tw_arg_u64(w->tw, GP_F_LATE_MEMORY_RECORDS, ms.late);
	gp_tw_arg_u64(w->tw, GP_F_FORCED_MEMORY_RECORDS, ms.forced);
	gp_tw_arg_u64(w->tw, GP_F_UNMATCHED_FREES, ms.unmatched_frees);
	gp_tw_arg_u64(w->tw, GP_F_LIVE_ALLOCATIONS, ms.live_allocs);
	gp_tw_arg_u64(w->tw, GP_F_RECORDS, w->records);
	gp_tw_arg_u64(w->tw, GP_F_BAD_RECORDS, w->bad_records);
	gp_tw_arg_u64(w->tw, GP_F_SKIPPED_MEMORY_RECORDS, w->skipped_memory_records);
	/* only where PyTorch's memory marks were seen: other traces unchanged */
	if (w->torch.points || w->torch.left_out || w->torch.bad_marks) {
		gp_tw_arg_u64(w->tw, GP_F_TORCH_POINTS, w->torch.points);
		gp_tw_arg_u64(w->tw, GP_F_TORCH_POINTS_LEFT_OUT, w->torch.left_out);
		gp_tw_arg_u64(w->tw, GP_F_TORCH_MARKS_UNREAD, w->torch.bad_marks);
	}
	/* only where gpuprof watched PyTorch's caching allocator */
	if (w->torch_alloc.events) {
		gp_tw_arg_u64(w->tw, GP_F_TORCH_EVENTS, w->torch_alloc.events);
		gp_tw_arg_u64(w->tw, GP_F_TORCH_SIZES_GUESSED, w->torch_alloc.guessed);
		gp_tw_arg_u64(w->tw, GP_F_TORCH_UNMATCHED_FREES, w->torch_alloc.unmatched_frees);
	}
	struct gp_tw_stats st;
	gp_tw_get_stats(w->tw, &st);
	gp_tw_arg_u64(w->tw, GP_F_EVENTS, st.events + 1);
	struct gp_buf devs;
	gp_buf_init(&devs, 0);
	gp_buf_putc(&devs, '[');
	int first = 1;
	for (uint32_t d = 0; d < GP_MAX_DEVICES; d++) {
		/* the devices this process used, as its GPU tracks */
		if (!w->dev[d].seen || !((w->dev_counted >> d) & 1))
			continue;
		gp_buf_puts(&devs, first ? "{" : ",{");
		first = 0;
		gp_buf_json_cstr(&devs, GP_F_DEVICE);
		gp_buf_putc(&devs, ':');
		gp_buf_u64(&devs, d);
		gp_buf_putc(&devs, ',');
		gp_buf_json_cstr(&devs, GP_F_NAME);
		gp_buf_putc(&devs, ':');
		gp_buf_json_cstr(&devs, w->dev[d].name);
		gp_buf_putc(&devs, ',');
		gp_buf_json_cstr(&devs, GP_F_TOTAL_MEMORY);
		gp_buf_putc(&devs, ':');
		gp_buf_u64(&devs, w->dev[d].total_memory);
		gp_buf_putc(&devs, '}');
	}
	gp_buf_putc(&devs, ']');
	if (!devs.failed)
		gp_tw_arg_raw(w->tw, GP_F_DEVICES, devs.data, devs.len);
	gp_buf_free(&devs);
}

/* The flight recorder's last dump, into the trace's file: the window, ended
 * by the writer's gpuprof.end. */
static void finish_flight(struct gp_writer_ctx *w)
{
	const char *line;
	size_t len;
	char *end = NULL;
	int err;

	write_end(w);
	err = gp_tw_take(w->tw, &line, &len);
	if (!err && !(end = malloc(len)))
		err = -ENOMEM;
	if (!err) {
		memcpy(end, line, len); /* the writer's buffer serves the dump too */
		err = gp_flight_end(flight, mono_ms(), gp_rel_ts(gp_now()), end, len);
	}
	free(end);
	if (err)
		gp_rec_say("finishing the flight recorder's trace failed: %s", strerror(-err));
	gp_tw_close(w->tw, NULL);
	gp_flight_free(flight);
	flight = NULL;
}

static void *writer_main(void *arg)
{
	struct gp_writer_ctx *w = arg;
	uint64_t seen_drops[3] = { 0, 0, 0 };
	/* Memory records older than the CUPTI flush before last are in: two
	 * flushes give a buffer that still holds a running kernel's record time
	 * to complete and be handed over. */
	uint64_t watermark = gp_now(), previous = watermark;
	uint64_t next_tick = mono_ms() + (uint64_t)flush_ms;
	uint64_t next_cupti = mono_ms() + (uint64_t)cupti_flush_ms;
	/* The allocation patches' scan (and their first switch of CUPTI's
	 * callbacks) every 500 ms, as before the flush came every 250 ms:
	 * the first switch waits for the program's first call, which may be
	 * making the context (alloc_patch.c) */
	uint64_t next_patch = mono_ms() + 500;

	while (!atomic_load(&stop_requested)) {
		gp_bufs_wait(ms_until(next_tick, 50));
		drain(w);
		uint64_t t = mono_ms();
		unsigned asked = atomic_load(&flushes_asked);
		int now_asked = asked != atomic_load(&flushes_made);
		if (t < next_tick && !now_asked)
			continue;
		next_tick = t + (uint64_t)flush_ms;
		if (t >= next_cupti || now_asked) {
			next_cupti = t + (uint64_t)cupti_flush_ms;
			uint64_t now = gp_now();
			/* Called here, never from a CUPTI callback; the buffers it
			 * completes land in the queue and are drained right away. */
			if (flush_flag >= 0)
				cuptiActivityFlushAll((uint32_t)flush_flag);
			drain(w);
			gp_memc_advance(w->mc, watermark, gp_emit_counter, w);
			write_watermark(w, watermark);
			watermark = previous;
			previous = now;
		}
		note_drops(w, seen_drops, gp_now());
		/* The file is flushed every tick whatever CUPTI delivered, so a
		 * killed program leaves everything decoded up to here. */
		if (gp_tw_flush(w->tw) != 0)
			break; /* disk full or gone: said below */
		if (flight)
			gp_flight_tick(flight, t, gp_rel_ts(gp_now()));
		atomic_store(&flushes_made, asked);
		/* After the flush: while a program loads objects (Python's
		 * imports), each of these scans them all, and what was decoded
		 * must not wait for that. A capture event written here is in the
		 * file at the next tick. */
		struct gp_alloc_capture cap;
		if (t >= next_patch) {
			next_patch = t + 500;
			if (gp_alloc_patch_tick(&cap))
				write_alloc_capture(w, &cap, gp_now());
		}
		gp_sig_refresh();
		gp_exit_refresh();
	}
	if (gp_tw_error(w->tw) == 0) {
		/* At exit a forced flush: what is still running will not finish. */
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		drain(w);
		gp_memc_advance(w->mc, UINT64_MAX, gp_emit_counter, w);
		note_drops(w, seen_drops, gp_now());
	}
	/* The trace is finished here, not by the thread that asked: a signal
	 * handler may only wait for it (gp_writer_finish_for_signal). */
	int err = gp_tw_error(w->tw);
	if (err) {
		gp_rec_say("writing the trace failed: %s; the trace is cut short at the last flush",
			   strerror(-err));
		gp_tw_abandon(w->tw);
		gp_flight_free(flight);
		flight = NULL;
	} else if (flight && !gp_flight_full(flight)) {
		finish_flight(w);
	} else {
		write_end(w);
		struct gp_tw_stats st;
		err = gp_tw_close(w->tw, &st);
		if (err)
			gp_rec_say("finishing the trace failed: %s", strerror(-err));
		gp_flight_free(flight); /* a default trace under its cap */
		flight = NULL;
	}
	w->tw = NULL;
	atomic_store(&finished, 1);
	return NULL;
}

static void write_meta(struct gp_writer_ctx *w);

int gp_writer_start(struct gp_trace_writer *tw, struct gp_flight *fl)
{
	flight = fl;
	const struct gp_rec_config *cfg = gp_rec_config();
	flush_ms = cfg->flush_ms;
	cupti_flush_ms = cfg->cupti_flush_ms;
	flush_flag = cfg->flush == GP_CUPTI_FLUSH_FORCED ? (int)CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
		     : cfg->flush == GP_CUPTI_FLUSH_NONE ? -1
							 : 0;
	memset(&ctx, 0, sizeof(ctx));
	ctx.tw = tw;
	ctx.host_pid = gp_rec.pid;
	gp_tc_init(&ctx.torch);
	int err = gp_memc_create(&ctx.mc, 0);
	if (err)
		return err;
	write_meta(&ctx);
	int r = pthread_create(&thread, NULL, writer_main, &ctx);
	if (r) {
		gp_memc_destroy(ctx.mc);
		ctx.mc = NULL;
		return -r;
	}
	/* named, so that top, perf and gdb tell it from the program's threads */
	pthread_setname_np(thread, "gpuprof-writer");
	thread_started = 1;
	return 0;
}

void gp_writer_stop(int clean, int timeout_ms)
{
	if (!atomic_exchange(&thread_started, 0))
		return;
	clean_exit = clean;
	atomic_store(&stop_requested, 1);
	gp_bufs_wake();
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	if (pthread_timedjoin_np(thread, NULL, &deadline) != 0) {
		/* Never hold the program's exit hostage: what was flushed stays
		 * recoverable with gpuprof recover. */
		gp_rec_say("the trace writer did not finish in %d ms; the trace is cut short "
			   "(run gpuprof recover on it)", timeout_ms);
		return;
	}
	gp_memc_destroy(ctx.mc);
	ctx.mc = NULL;
	gp_u64set_free(&ctx.streams);
	gp_u64set_free(&ctx.threads);
	gp_strmap_free(&ctx.ranges);
	gp_strmap_free(&ctx.kernels);
	gp_u64map_free(&ctx.cb_live);
	gp_u64map_free(&ctx.torch_alloc.blocks);
	gp_u64map_free(&ctx.callers);
	for (unsigned i = 0; i < ctx.ncallers; i++)
		free(ctx.caller_names[i]);
	ctx.ncallers = 0;
}

static int on_writer_thread(void)
{
	return thread_started && pthread_equal(pthread_self(), thread);
}

/* Sleeps in steps of 2 ms until *flag holds at least want, or ms passed.
 * nanosleep and atomics only: called in signal handlers. */
static int wait_for(_Atomic unsigned *flag, unsigned want, int ms)
{
	struct timespec step = { 0, 2000000L };
	for (int waited = 0; waited < ms; waited += 2) {
		if ((int)(atomic_load(flag) - want) >= 0)
			return 0;
		nanosleep(&step, NULL);
	}
	return (int)(atomic_load(flag) - want) >= 0 ? 0 : -ETIMEDOUT;
}

/* The writer finishes the trace (clean, or dying of sig) and this thread
 * waits for it; see gp_writer_finish_for_signal. */
static int finish_and_wait(int clean, int sig, int timeout_ms)
{
	if (!thread_started || on_writer_thread())
		return -EDEADLK;
	clean_exit = clean;
	atomic_store(&end_signal, sig);
	atomic_store(&stop_requested, 1);
	/* gp_bufs_wake takes a mutex the interrupted thread may hold: the
	 * writer sees the request within its 50 ms wait instead. */
	return wait_for(&finished, 1, timeout_ms);
}

int gp_writer_finish_for_signal(int sig, int timeout_ms)
{
	return finish_and_wait(0, sig, timeout_ms);
}

int gp_writer_finish_for_exit(int timeout_ms)
{
	return finish_and_wait(1, 0, timeout_ms);
}

int gp_writer_wait_finished(int timeout_ms)
{
	return wait_for(&finished, 1, timeout_ms);
}

int gp_writer_flush_now(int timeout_ms)
{
	if (!thread_started || on_writer_thread())
		return -EDEADLK;
	unsigned want = atomic_fetch_add(&flushes_asked, 1) + 1;
	return wait_for(&flushes_made, want, timeout_ms);
}

/* ---- metadata ---- */

static size_t read_cmdline(char *buf, size_t cap)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return 0;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return (size_t)n;
}

static void write_meta(struct gp_writer_ctx *w)
{
	const struct gp_rec_config *cfg = gp_rec_config();
	char cmdline[4096];
	size_t n = read_cmdline(cmdline, sizeof(cmdline));
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);

	gp_tw_begin(w->tw, GP_PH_META, GP_EV_META, GP_CAT_GPUPROF, w->host_pid, 0, 0);
	gp_tw_field_str(w->tw, GP_T_S, "g");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_FORMAT, GP_TRACE_FORMAT);
	gp_tw_arg_str(w->tw, GP_F_VERSION, GPUPROF_VERSION);
	gp_tw_arg_i64(w->tw, GP_F_PID, w->host_pid);
	gp_tw_arg_i64(w->tw, GP_F_PPID, getppid());
	gp_tw_arg_str_n(w->tw, GP_F_CMDLINE, cmdline, n);
	gp_tw_arg_str(w->tw, GP_F_HOSTNAME, host);
	gp_tw_arg_u64(w->tw, GP_F_START_UNIX_NS, (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec);
	gp_tw_arg_u64(w->tw, GP_F_TS_BASE_NS, gp_rec.ts_base);
	gp_tw_arg_str(w->tw, GP_F_CLOCK, "cupti");
	const char *mode = cfg->mode;
	gp_tw_arg_str(w->tw, GP_F_MODE, mode && *mode ? mode : "cuda");
	unsigned parts = cfg->parts | GP_REC_MEMORY;
	char names[160];
	gp_rec_parts_names(parts, names, sizeof(names));
	gp_tw_arg_str(w->tw, GP_F_RECORD, names);
	/* module globals: recorded (run) or not (none) by the parts at start,
	 * which always have memory (gp_rec_memory_records) */
	gp_tw_arg_str(w->tw, GP_F_STATICS, gp_rec_memory_records(parts) ? "run" : "none");
	/* CUPTI's memory records placed by their context (context_devices.c) */
	gp_tw_arg_str(w->tw, GP_F_MEMORY_DEVICE, "context");
	gp_tw_arg_str(w->tw, GP_F_GZ_FLUSH, GP_GZ_FLUSH_KIND);
	gp_tw_arg_i64(w->tw, GP_F_GPU_PID_BASE, gp_gpu_pid(w->host_pid, 0));
	const char *root = cfg->root_pid;
	if (root)
		gp_tw_arg_str(w->tw, GP_F_ROOT_PID, root);
	/* torch.distributed's launchers say which process this is (Slurm's
	 * srun where torchrun is not used): what matches the processes of two
	 * runs (gpuprof compare) across nodes, and the ranks of one run */
	long long rank = cfg->rank;
	long long world = cfg->world_size;
	long long local_rank = cfg->local_rank;
	long long local_world = cfg->local_world_size;
	if (rank >= 0)
		gp_tw_arg_i64(w->tw, GP_F_RANK, rank);
	if (world > 0)
		gp_tw_arg_i64(w->tw, GP_F_WORLD_SIZE, world);
	if (local_rank >= 0)
		gp_tw_arg_i64(w->tw, GP_F_LOCAL_RANK, local_rank);
	if (local_world > 0)
		gp_tw_arg_i64(w->tw, GP_F_LOCAL_WORLD_SIZE, local_world);
	/* the launcher's start, the same in every process of the job */
	if (cfg->has_job_start)
		gp_tw_arg_u64(w->tw, GP_F_JOB_START_UNIX_NS, cfg->job_start_unix_ns);
	gp_tw_end(w->tw);

	/* "python3 train.py (pid 1234)": the first two words say what it is. */
	char pname[160];
	size_t words = 0, k = 0;
	for (; k < n && k < 100; k++) {
		if (cmdline[k] == ' ' && ++words == 2)
			break;
	}
	snprintf(pname, sizeof(pname), "%.*s (pid %lld)", (int)k, cmdline, (long long)w->host_pid);
	gp_tw_begin(w->tw, GP_PH_PROCESS_NAME, GP_EV_PROCESS_NAME, GP_CAT_NONE, w->host_pid, 0, 0);
	gp_tw_args_begin(w->tw);
	gp_tw_arg_str(w->tw, GP_F_NAME, pname);
	gp_tw_end(w->tw);
	gp_tw_flush(w->tw);
}
