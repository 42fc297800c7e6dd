/* Memory over time, for pictures (gpuprof report): a bounded number of
 * buckets over the whole run, each with the least and the most of every
 * amount while it lasted, so that no peak is lost however long the run,
 * and how long each phase took of it.
 *
 * The run's length is not known while it is read: buckets start narrow and
 * double in width, neighbours merged, whenever time runs past the last. */
#ifndef GPUPROF_AN_TIMELINE_H
#define GPUPROF_AN_TIMELINE_H

#include <stdint.h>

/* Buckets kept (a power of two: a merge halves them). */
#define AN_TL_BUCKETS 4096
/* The first bucket's width, in ns; doubled as needed. */
#define AN_TL_FIRST_WIDTH_NS 10000

/* The amounts followed; their names are result.h's (gp_an_tl_names). */
enum an_tl_series { TL_ALLOCATED, TL_RESERVED, TL_OTHER, TL_DEVICE, TL_N };

struct an_timeline {
	int started;
	int64_t t0;            /* absolute ns: bucket 0's start */
	int64_t width;         /* ns per bucket */
	uint32_t n;            /* buckets touched: 0 .. n-1 */
	/* each series: its first bucket with a value (n: none yet), its value
	 * now, its least and most in each bucket */
	uint32_t first[TL_N];
	uint64_t now[TL_N];
	uint64_t *lo[TL_N], *hi[TL_N];
	/* ns of each bucket spent in each phase (an_phase), and the phase now */
	uint64_t *phase_ns;    /* [AN_TL_BUCKETS][nphases] */
	unsigned nphases;
	int64_t last_ts;
	uint8_t phase;
};

/* 0 or -ENOMEM. nphases: how many phases there are. */
int an_tl_init(struct an_timeline *tl, unsigned nphases);
void an_tl_free(struct an_timeline *tl);

/* The amounts at ts (known: a bit per series whose value is known), and
 * the phase from now on. Times before the first are counted in bucket 0. */
void an_tl_note(struct an_timeline *tl, int64_t ts, const uint64_t v[TL_N], unsigned known,
		uint8_t phase);

/* The phase that took most of bucket i (the one before it, for a bucket
 * where no time passed). */
uint8_t an_tl_bucket_phase(const struct an_timeline *tl, uint32_t i, uint8_t before);

#endif
