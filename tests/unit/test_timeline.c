/* viewer/analyze/model/timeline.c: a peak of one nanosecond survives every
 * merge, buckets stay bounded, values carry over empty buckets, a series
 * known late starts where it became known, and each bucket names the phase
 * that took most of it. */
#include "check.h"
#include "timeline.h"

static uint64_t most(const struct an_timeline *tl, int s)
{
	uint64_t m = 0;

	for (uint32_t i = tl->first[s]; i < tl->n; i++)
		m = tl->hi[s][i] > m ? tl->hi[s][i] : m;
	return m;
}

static uint64_t least(const struct an_timeline *tl, int s)
{
	uint64_t m = UINT64_MAX;

	for (uint32_t i = tl->first[s]; i < tl->n; i++)
		m = tl->lo[s][i] < m ? tl->lo[s][i] : m;
	return m;
}

int main(void)
{
	struct an_timeline tl;
	uint64_t v[TL_N] = { 10, 0, 0, 10 };
	const unsigned alloc_dev = 1u << TL_ALLOCATED | 1u << TL_DEVICE;

	CHECK_EQ_INT(an_tl_init(&tl, 3), 0);
	/* 100 s of 10 bytes, noted every 10 ms; at 37.5 s a spike of 1000
	 * for 1 ns; reserved known from 50 s on */
	int64_t t0 = 1000000000;
	for (int64_t t = 0; t <= 100000000000LL; t += 10000000) {
		unsigned known = alloc_dev | (t >= 50000000000LL ? 1u << TL_RESERVED : 0);
		v[TL_RESERVED] = 20;
		an_tl_note(&tl, t0 + t, v, known, (uint8_t)((t / 1000000000) % 2));
		if (t == 37500000000LL) {
			v[TL_ALLOCATED] = 1000;
			an_tl_note(&tl, t0 + t, v, known, 0);
			v[TL_ALLOCATED] = 10;
			an_tl_note(&tl, t0 + t + 1, v, known, 0);
		}
	}
	CHECK(tl.n <= AN_TL_BUCKETS);
	CHECK(tl.n > AN_TL_BUCKETS / 2); /* the range is used, not a corner of it */
	CHECK_EQ_INT(tl.t0, t0);
	CHECK_EQ_U64(most(&tl, TL_ALLOCATED), 1000);
	CHECK_EQ_U64(least(&tl, TL_ALLOCATED), 10);
	/* the spike is in the bucket of 37.5 s, and only there */
	uint32_t at = (uint32_t)((37500000000LL) / tl.width);
	CHECK_EQ_U64(tl.hi[TL_ALLOCATED][at], 1000);
	CHECK_EQ_U64(tl.hi[TL_ALLOCATED][at + 2], 10);
	CHECK_EQ_U64(tl.lo[TL_ALLOCATED][at], 10);
	/* reserved: from the bucket of 50 s */
	CHECK_EQ_INT(tl.first[TL_RESERVED], (uint32_t)(50000000000LL / tl.width));
	CHECK_EQ_U64(least(&tl, TL_RESERVED), 20);
	CHECK_EQ_INT(tl.first[TL_OTHER], UINT32_MAX); /* never known */
	/* phases alternate each second: a bucket well inside second 3 is phase
	 * 1, inside second 4 phase 0 */
	CHECK(tl.width < 500000000);
	CHECK_EQ_INT(an_tl_bucket_phase(&tl, (uint32_t)(3500000000LL / tl.width), 9), 1);
	CHECK_EQ_INT(an_tl_bucket_phase(&tl, (uint32_t)(4500000000LL / tl.width), 9), 0);
	an_tl_free(&tl);

	/* a jump in time: the buckets passed over hold the value of before */
	CHECK_EQ_INT(an_tl_init(&tl, 1), 0);
	v[TL_ALLOCATED] = 5;
	an_tl_note(&tl, 0, v, alloc_dev, 0);
	v[TL_ALLOCATED] = 7;
	an_tl_note(&tl, 100 * AN_TL_FIRST_WIDTH_NS, v, alloc_dev, 0);
	CHECK_EQ_INT(tl.n, 101);
	CHECK_EQ_U64(tl.lo[TL_ALLOCATED][50], 5);
	CHECK_EQ_U64(tl.hi[TL_ALLOCATED][50], 5);
	CHECK_EQ_U64(tl.lo[TL_ALLOCATED][100], 5); /* 5 until the change in it */
	CHECK_EQ_U64(tl.hi[TL_ALLOCATED][100], 7);
	/* an event a little out of order counts where time already is */
	an_tl_note(&tl, 10, v, alloc_dev, 0);
	CHECK_EQ_INT(tl.n, 101);
	an_tl_free(&tl);

	/* times at both ends of int64 (an absurd trace): bounded, no overflow
	 * (UBSan watches) */
	CHECK_EQ_INT(an_tl_init(&tl, 2), 0);
	an_tl_note(&tl, INT64_MIN + 5, v, alloc_dev, 1);
	an_tl_note(&tl, 0, v, alloc_dev, 0);
	an_tl_note(&tl, INT64_MAX, v, alloc_dev, 1);
	CHECK(tl.n <= AN_TL_BUCKETS);
	CHECK_EQ_U64(tl.hi[TL_ALLOCATED][tl.n - 1], 7);
	an_tl_free(&tl);
	return CHECK_DONE();
}
