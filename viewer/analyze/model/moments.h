/* What was live at moments of the run, for the report's picture of live
 * memory and a breakdown at any moment (gpuprof report), and at one time
 * asked for (gpuprof analyze --at).
 *
 * The device's memory events (allocations and frees) are cut into at most
 * AN_MOMENTS stretches of as many events each: the picture follows what
 * memory did, not the clock (a minute of loading that allocates little
 * takes a column, a step that allocates a thousand times many), as
 * PyTorch's memory_viz lays allocations out by event. Each stretch keeps
 * its moment: after which of its events the framework's live bytes (what
 * the peak follows) were the most, with the allocations alive then
 * (references). The run's length is not known while it is read: stretches
 * start one event wide and double in width, neighbours merged (the larger
 * moment kept), whenever the events run past the last, or the references
 * kept pass AN_MOMENT_REFS. The moment that holds the run's peak is the
 * peak's snapshot, to the byte. */
#ifndef GPUPROF_AN_MOMENTS_H
#define GPUPROF_AN_MOMENTS_H

#include <stddef.h>
#include <stdint.h>

/* Stretches kept (a power of two: a merge halves them). */
#define AN_MOMENTS 256
/* References to allocations kept over every moment, at most (8 bytes
 * each): past it, stretches merge early. */
#define AN_MOMENT_REFS (4u << 20)

struct an_rec;

/* One of PyTorch's segments then (native mode with the allocator hook). */
struct an_seg {
	uint64_t addr, bytes;
};

struct an_moment {
	int set;             /* the stretch had a moment */
	int64_t ts;          /* absolute ns: after the event there */
	uint64_t bytes;      /* the framework's live bytes then */
	uint32_t step;       /* raw (an_current_step) */
	uint8_t phase;
	struct an_rec **m;   /* alive then: references */
	size_t n;
	/* PyTorch's segments then, by address (native mode with the hook;
	 * nsegs 0 otherwise, or where expandable segments map pages instead) */
	struct an_seg *segs;
	size_t nsegs;
};

/* A snapshot being watched: the cut of the last processed record, and
 * those freed since (state.h, struct an_snap). */
struct an_moments {
	int started;
	uint64_t events;     /* the device's memory events so far */
	uint64_t width;      /* events a stretch holds */
	uint32_t open;       /* the stretch events are in now */
	/* each stretch's first and last event's time (absolute ns); the open
	 * one's last so far */
	int64_t from[AN_MOMENTS], to[AN_MOMENTS];
	struct an_moment cur; /* its most so far (m, n unused) */
	/* cur's segments are still those of now: copied at the next change
	 * of them (an_moments_segments) or when the stretch closes, not at
	 * every new most */
	int segs_due;
	struct an_moment v[AN_MOMENTS];
	size_t refs;
};

#endif
