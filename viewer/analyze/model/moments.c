/* What was live at moments of the run, and at the time --at asks for
 * (moments.h). Called by memory.c around each change of live memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

static void moment_drop(struct an_analysis *a, struct an_moments *mo, struct an_moment *m)
{
	for (size_t i = 0; i < m->n; i++)
		an_rec_unref(a, m->m[i]);
	mo->refs -= m->n;
	free(m->m);
	free(m->segs);
	memset(m, 0, sizeof(*m));
}

static int seg_cmp(const void *x, const void *y)
{
	const struct an_seg *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int an_segments_now(const struct an_pd *pd, struct an_seg **out, size_t *n)
{
	struct an_seg *v;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (!an_native_blocks(pd->proc))
		return 0;
	if (pd->seg_mapped) {
		if (!pd->mapped.n)
			return 0;
		v = malloc(pd->mapped.n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, pd->mapped.v, pd->mapped.n * sizeof(*v));
		*out = v;
		*n = pd->mapped.n;
		return 0;
	}
	if (!pd->pools.count)
		return 0;
	v = malloc(pd->pools.count * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < pd->pools.cap; i++) {
		const uint64_t *size = pd->pools.slots[i].val;

		if (size && *size)
			v[k++] = (struct an_seg){ pd->pools.slots[i].key, *size };
	}
	qsort(v, k, sizeof(*v), seg_cmp);
	*out = v;
	*n = k;
	return 0;
}

/* Into dst, the larger of dst and src (the earlier on a tie); the other
 * is let go. src is left empty. */
static void moment_keep_larger(struct an_analysis *a, struct an_moments *mo, struct an_moment *dst,
			       struct an_moment *src)
{
	if (!src->set)
		return;
	if (dst->set && (dst->bytes > src->bytes || (dst->bytes == src->bytes && dst->ts <= src->ts))) {
		moment_drop(a, mo, src);
		return;
	}
	moment_drop(a, mo, dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

/* Twice as wide: stretches 2i and 2i+1 become stretch i (the open one
 * has been put in its slot). */
static void merge(struct an_analysis *a, struct an_moments *mo)
{
	for (uint32_t i = 0; i < AN_MOMENTS / 2; i++) {
		struct an_moment keep = { 0 };

		moment_keep_larger(a, mo, &keep, &mo->v[2 * i]);
		moment_keep_larger(a, mo, &keep, &mo->v[2 * i + 1]);
		mo->v[i] = keep;
		mo->from[i] = mo->from[2 * i];
		mo->to[i] = 2 * i + 1 <= mo->open ? mo->to[2 * i + 1] : mo->to[2 * i];
	}
	memset(&mo->v[AN_MOMENTS / 2], 0, (AN_MOMENTS / 2) * sizeof(mo->v[0]));
	mo->width *= 2;
	mo->open /= 2;
}

/* The open stretch's moment, with what was live then, into its slot.
 * 0 or -ENOMEM. */
static int close_open(struct an_analysis *a, struct an_pd *pd)
{
	struct an_moments *mo = &pd->mo;
	struct an_moment m;
	int oom;

	if (an_moments_segments(pd))
		return -ENOMEM;
	m = mo->cur;
	mo->cur.segs = NULL; /* handed over to m */
	mo->cur.nsegs = 0;
	mo->cur.set = 0;

	m.m = an_snap_members(pd, &pd->mo_snap, &m.n, &oom);
	/* the stash's records among them: referenced before it lets go */
	for (size_t i = 0; i < m.n; i++)
		m.m[i]->ref++;
	an_snap_clear(a, &pd->mo_snap);
	pd->mo_snap.taken = 0;
	if (oom) {
		free(m.segs);
		return -ENOMEM;
	}
	mo->refs += m.n;
	m.set = 1;
	moment_keep_larger(a, mo, &mo->v[mo->open], &m);
	while (mo->refs > AN_MOMENT_REFS && mo->width < UINT64_MAX / 4)
		merge(a, mo);
	return 0;
}

/* The open stretch's most so far: now. */
static void note_now(struct an_analysis *a, struct an_pd *pd, int64_t ts, uint32_t step, uint8_t phase)
{
	free(pd->mo.cur.segs);
	pd->mo.cur = (struct an_moment){ .set = 1, .ts = ts, .bytes = pd->fw_live, .step = step, .phase = phase };
	pd->mo.segs_due = 1;
	an_snap_take(a, &pd->mo_snap);
}

int an_moments_segments(struct an_pd *pd)
{
	if (!pd->mo.segs_due)
		return 0;
	pd->mo.segs_due = 0;
	return an_segments_now(pd, &pd->mo.cur.segs, &pd->mo.cur.nsegs);
}

static int at_take(struct an_analysis *a, struct an_pd *pd, int64_t at, int after_end)
{
	pd->at_ts = at;
	pd->at_bytes = pd->fw_live;
	pd->at_step = an_current_step(pd->proc);
	pd->at_phase = an_process_phase(pd->proc);
	pd->at_after_end = after_end;
	pd->at_events = pd->mo.events;
	an_snap_take(a, &pd->at);
	return an_segments_now(pd, &pd->at_segs, &pd->at_nsegs);
}

/* ts, or where an event came late (events come in the order they are
 * processed), the time of the latest before it: it counts as now */
static int64_t now_of(const struct an_pd *pd, int64_t ts)
{
	return ts < pd->mo.to[pd->mo.open] ? pd->mo.to[pd->mo.open] : ts;
}

int an_moments_before(struct an_analysis *a, struct an_pd *pd, int64_t ts)
{
	struct an_moments *mo = &pd->mo;

	/* --at: what was live after every event up to that time */
	if (a->has_at && !pd->at.taken && ts > a->at_ns && at_take(a, pd, a->at_ns, 0))
		return -ENOMEM;
	if (!pd->has_tl) {
		mo->events++;
		return 0;
	}
	if (mo->started)
		ts = now_of(pd, ts);
	if (!mo->started) {
		mo->started = 1;
		mo->width = 1;
		mo->open = 0;
		mo->from[0] = ts;
	} else if (mo->events >= (uint64_t)(mo->open + 1) * mo->width) {
		uint64_t k;

		if (close_open(a, pd))
			return -ENOMEM;
		for (k = mo->events / mo->width; k >= AN_MOMENTS; k = mo->events / mo->width)
			merge(a, mo);
		/* a new stretch begins with this event; where close_open merged
		 * early (the references' budget), the event may fall in the
		 * stretch just closed, twice as wide now */
		if (k * mo->width == mo->events)
			mo->from[k] = ts;
		mo->open = (uint32_t)k;
	}
	mo->to[mo->open] = ts;
	mo->events++;
	return 0;
}

void an_moments_after(struct an_analysis *a, struct an_pd *pd, int64_t ts, uint32_t step, uint8_t phase)
{
	ts = now_of(pd, ts);
	if (pd->has_tl && pd->mo.started && (!pd->mo.cur.set || pd->fw_live > pd->mo.cur.bytes))
		note_now(a, pd, ts, step, phase);
}

void an_moments_event(struct an_analysis *a, struct an_pd *pd, int64_t ts)
{
	/* a stretch's first event, a free or another's allocation: what is
	 * live after it is the stretch's most so far */
	if (pd->has_tl && pd->mo.started && !pd->mo.cur.set)
		note_now(a, pd, now_of(pd, ts), an_current_step(pd->proc), an_process_phase(pd->proc));
}

int an_moments_end(struct an_analysis *a, struct an_pd *pd)
{
	if (a->has_at && !pd->at.taken && at_take(a, pd, a->at_ns, 1))
		return -ENOMEM;
	if (pd->has_tl && pd->mo.started && pd->mo_snap.taken)
		return close_open(a, pd);
	return 0;
}

void an_moments_free(struct an_analysis *a, struct an_pd *pd)
{
	for (size_t i = 0; i < AN_MOMENTS; i++)
		moment_drop(a, &pd->mo, &pd->mo.v[i]);
	an_snap_free(a, &pd->mo_snap);
	an_snap_free(a, &pd->at);
	free(pd->at_segs);
	free(pd->mo.cur.segs);
}
