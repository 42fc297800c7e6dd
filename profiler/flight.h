/* The flight recorder (GPUPROF_WINDOW_S): the trace kept in memory, its
 * last window_s seconds in full, and written out on demand.
 *
 * The writer writes its events into a ring of compressed segments
 * (exporters/gz_ring.h) instead of the file, and shows each to the window
 * head (window_head.h). Every second the segment being written is sealed,
 * segments older than the window are dropped, and the next segment opens
 * with the head's replay of the run so far and a gpuprof.window event, so
 * that a dump may begin at any kept segment: it opens with the run's live
 * set, each block as it was made, then the window's events in full.
 *
 * Dumps (TRACE_FORMAT.md, "Flight recorder"): at the end, into the trace's
 * own file; on SIGUSR1 (the program goes on; its own handler, where it set
 * one before CUDA started, is not replaced: it then gets the signal alone),
 * after an out-of-memory error and when the process's device memory
 * crosses a threshold (each at most once per window), for a range of
 * steps and between cudaProfilerStart and cudaProfilerStop (from the
 * segment sealed where the range began: the trace writer's tap seals at
 * its first line and dumps at its last), into <stem>.dump<N>.json.gz beside it. The trace's own file holds "[", the
 * meta and the run's outline (outline.h) as it goes, flushed each second;
 * the end's window is appended to it, and every dump begins with a copy
 * of it. A dump is written by the writer thread;
 * the program is never stopped for it.
 *
 * The default trace is one too, with a size cap (when.cap_bytes): written
 * in full while the head and the outline watch (the outline into a file
 * of its own, unlinked), until its file holds cap_bytes; then the trace so
 * far is ended as STEM.dump0.json.gz (reason cap), and under the trace's
 * name the outline so far, a gpuprof.cap, and the flight recorder from
 * there (TRACE_FORMAT.md, "The size cap").
 *
 * Writer thread only, but for the signal's handler (an atomic). */
#ifndef GPUPROF_FLIGHT_H
#define GPUPROF_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "trace_writer.h"

struct gp_flight;

/* Dumps asked for besides the end, SIGUSR1 and out-of-memory errors
 * (dump_when.h): all 0, none. */
struct gp_flight_when {
	uint64_t at_bytes;       /* the process's device memory crosses this */
	unsigned at_permille;    /* or this share of the device */
	uint64_t step_first;     /* steps first..last, whole: written at last's mark */
	uint64_t step_last;
	unsigned seal_ms;        /* a segment's length (0: a second) */
	const char *run_dir;     /* a run directory (borrowed, for the
				  * recorder's life): SIGUSR1 dumps at the step
				  * the launcher asks for (flight_sync.h); NULL */
	uint64_t cap_bytes;      /* the default trace: written whole until its
				  * file holds this many bytes, then a flight
				  * recorder (0: one from the start) */
};

/* Takes fd (the trace's own file, path its name: the end's dump and the
 * stem of the others), even on failure. *tw: the writer to write with,
 * into the ring (owned by the caller, closed before gp_flight_free); with
 * when->cap_bytes, into fd until the cap. host_pid: the pid of the dump's
 * own events. 0 or -errno. */
int gp_flight_new(struct gp_flight **out, int fd, const char *path, int64_t host_pid, int window_s,
		  size_t ring_bytes, const struct gp_flight_when *when, struct gp_trace_writer **tw);
/* Every writer tick: seals a segment each second, and writes the dumps
 * asked for since (SIGUSR1, an out-of-memory error). now_ms: a monotonic
 * clock; ts_ns: the trace's time now. */
void gp_flight_tick(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns);
/* The last dump, into the trace's own file, ended by end_line (the
 * writer's gpuprof.end, its text without ",\n"). 0 or -errno. */
int gp_flight_end(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns, const char *end_line, size_t end_len);
/* Whether the trace is still written in full (a default trace under its
 * cap): it then ends as any trace (gp_tw_close), not by gp_flight_end. */
int gp_flight_full(const struct gp_flight *f);
/* Safe on NULL. */
void gp_flight_free(struct gp_flight *f);

#endif
