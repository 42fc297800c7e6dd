/* The recorder's state, which every part of it reads: whether it records,
 * its process and clock, what it records now, what it lost; and its one
 * way to speak (gp_rec_say).
 *
 * Threads: the host program's threads only run CUPTI/NVTX callbacks, which
 * copy what they must and hand it over (cupti_buffers.c, host_events.c).
 * One writer thread (writer_thread.c) decodes, encodes and compresses.
 * Nothing of the recorder exits, aborts or writes to stdout: failures print
 * one "gpuprof:" line on stderr (gp_rec_say) and turn the recorder off. */
#ifndef GPUPROF_STATE_H
#define GPUPROF_STATE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

enum gp_rec_state {
	GP_REC_OFF = 0,      /* never started, or failed: callbacks do nothing */
	GP_REC_RUNNING = 1,
	GP_REC_STOPPING = 2, /* process exit in progress */
	GP_REC_FORKED = 3,   /* we are a fork()ed child: the trace is the parent's */
	GP_REC_FAILED = 4,   /* gave up after an error: said so once on stderr */
};

struct gp_rec_globals {
	_Atomic int state;
	pid_t pid;
	uint64_t ts_base;          /* CUPTI ns at start; trace ts are relative to it */
	_Atomic uint64_t dropped_cupti;   /* records CUPTI reported lost */
	_Atomic uint64_t dropped_buffers; /* buffer requests refused: memory bound hit */
	_Atomic uint64_t dropped_host;    /* host events lost: queue full */
};
extern struct gp_rec_globals gp_rec;

static inline int gp_rec_running(void)
{
	return atomic_load_explicit(&gp_rec.state, memory_order_acquire) == GP_REC_RUNNING;
}

/* The parts (parts.h) recording now: the configuration's plus memory
 * (inject.c), unless gpuprof_bench_record() changed them. */
extern _Atomic unsigned gp_rec_live_parts;
static inline unsigned gp_rec_live(void)
{
	return atomic_load_explicit(&gp_rec_live_parts, memory_order_relaxed);
}

/* One line "gpuprof: <msg>" on stderr (write(2), no stdio buffers). */
void gp_rec_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
