/* Memory over time in a bounded number of buckets (timeline.h). */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int an_tl_init(struct an_timeline *tl, unsigned nphases)
{
	memset(tl, 0, sizeof(*tl));
	tl->nphases = nphases;
	tl->width = AN_TL_FIRST_WIDTH_NS;
	for (int s = 0; s < TL_N; s++) {
		tl->lo[s] = calloc(AN_TL_BUCKETS, sizeof(uint64_t));
		tl->hi[s] = calloc(AN_TL_BUCKETS, sizeof(uint64_t));
		if (!tl->lo[s] || !tl->hi[s])
			goto fail;
	}
	tl->phase_ns = calloc((size_t)AN_TL_BUCKETS * nphases, sizeof(uint64_t));
	if (!tl->phase_ns)
		goto fail;
	return 0;
fail:
	an_tl_free(tl);
	return -ENOMEM;
}

void an_tl_free(struct an_timeline *tl)
{
	for (int s = 0; s < TL_N; s++) {
		free(tl->lo[s]);
		free(tl->hi[s]);
		tl->lo[s] = tl->hi[s] = NULL;
	}
	free(tl->phase_ns);
	tl->phase_ns = NULL;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Twice as wide: bucket i becomes buckets 2i and 2i+1. A series counts
 * only the halves where it had a value. */
static void merge(struct an_timeline *tl)
{
	uint32_t half = (tl->n + 1) / 2;

	for (int s = 0; s < TL_N; s++) {
		uint32_t first = tl->first[s];

		for (uint32_t i = 0; i < half; i++) {
			uint32_t a = 2 * i, b = 2 * i + 1;
			int ka = first != UINT32_MAX && a >= first && a < tl->n;
			int kb = first != UINT32_MAX && b >= first && b < tl->n;

			if (ka && kb) {
				tl->lo[s][i] = min_u64(tl->lo[s][a], tl->lo[s][b]);
				tl->hi[s][i] = max_u64(tl->hi[s][a], tl->hi[s][b]);
			} else if (ka || kb) {
				tl->lo[s][i] = tl->lo[s][ka ? a : b];
				tl->hi[s][i] = tl->hi[s][ka ? a : b];
			}
		}
		if (first != UINT32_MAX)
			tl->first[s] = first / 2;
	}
	for (uint32_t i = 0; i < half; i++) {
		uint64_t *dst = &tl->phase_ns[(size_t)i * tl->nphases];
		const uint64_t *a = &tl->phase_ns[(size_t)2 * i * tl->nphases];

		for (unsigned k = 0; k < tl->nphases; k++) {
			uint64_t sum = a[k];

			if (2 * i + 1 < tl->n)
				sum += a[tl->nphases + k];
			dst[k] = sum;
		}
	}
	memset(&tl->phase_ns[(size_t)half * tl->nphases], 0,
	       (size_t)(AN_TL_BUCKETS - half) * tl->nphases * sizeof(uint64_t));
	tl->n = half;
	tl->width *= 2;
}

/* Time since t0, in ns: ts is never before it (an_tl_note), and unsigned
 * arithmetic keeps any two int64 times apart without overflow. */
static uint64_t since_t0(const struct an_timeline *tl, int64_t ts)
{
	return ts <= tl->t0 ? 0 : (uint64_t)ts - (uint64_t)tl->t0;
}

static uint32_t bucket_of(const struct an_timeline *tl, int64_t ts)
{
	uint64_t i = since_t0(tl, ts) / (uint64_t)tl->width;

	return i >= AN_TL_BUCKETS ? AN_TL_BUCKETS : (uint32_t)i;
}

/* Widths stop doubling here: 4096 buckets of 2^51 ns span 2^63 ns (292
 * years), so a bucket's end fits in 64 bits; the last bucket takes what
 * comes later (only an absurd trace's times get there). */
#define MAX_WIDTH (INT64_C(1) << 51)

/* The time from last_ts to ts, in the phase that held, shared out over
 * the buckets it spans. */
static void spend(struct an_timeline *tl, int64_t ts)
{
	uint64_t from = since_t0(tl, tl->last_ts), to_all = since_t0(tl, ts);

	while (from < to_all) {
		uint64_t i = from / (uint64_t)tl->width;
		if (i >= AN_TL_BUCKETS)
			i = AN_TL_BUCKETS - 1;
		uint64_t end = (i + 1) * (uint64_t)tl->width; /* at most 2^63 */
		uint64_t to = end < to_all && end > from ? end : to_all;

		tl->phase_ns[(size_t)i * tl->nphases + tl->phase] += to - from;
		from = to;
	}
}

void an_tl_note(struct an_timeline *tl, int64_t ts, const uint64_t v[TL_N], unsigned known,
		uint8_t phase)
{
	if (!tl->lo[0])
		return;
	if (!tl->started) {
		tl->started = 1;
		tl->t0 = ts;
		tl->last_ts = ts;
		for (int s = 0; s < TL_N; s++)
			tl->first[s] = UINT32_MAX;
	}
	if (ts < tl->last_ts)
		ts = tl->last_ts; /* an event a little late: counted where time is */
	uint32_t i = bucket_of(tl, ts);
	while (i >= AN_TL_BUCKETS && tl->width < MAX_WIDTH) {
		merge(tl);
		i = bucket_of(tl, ts);
	}
	if (i >= AN_TL_BUCKETS)
		i = AN_TL_BUCKETS - 1;
	spend(tl, ts);
	/* buckets passed over hold the values of before, unchanged */
	for (uint32_t j = tl->n; j <= i; j++) {
		for (int s = 0; s < TL_N; s++) {
			if (tl->first[s] == UINT32_MAX)
				continue;
			tl->lo[s][j] = tl->hi[s][j] = tl->now[s];
		}
	}
	if (tl->n < i + 1)
		tl->n = i + 1;
	for (int s = 0; s < TL_N; s++) {
		if (!(known & (1u << s)))
			continue;
		if (tl->first[s] == UINT32_MAX) {
			tl->first[s] = i;
			tl->lo[s][i] = tl->hi[s][i] = v[s];
		} else {
			tl->lo[s][i] = min_u64(tl->lo[s][i], v[s]);
			tl->hi[s][i] = max_u64(tl->hi[s][i], v[s]);
		}
		tl->now[s] = v[s];
	}
	tl->last_ts = ts;
	tl->phase = phase < tl->nphases ? phase : 0;
}

uint8_t an_tl_bucket_phase(const struct an_timeline *tl, uint32_t i, uint8_t before)
{
	const uint64_t *ns = &tl->phase_ns[(size_t)i * tl->nphases];
	uint64_t most = 0;
	uint8_t which = before;

	for (unsigned k = 0; k < tl->nphases; k++) {
		if (ns[k] > most) {
			most = ns[k];
			which = (uint8_t)k;
		}
	}
	return which;
}
