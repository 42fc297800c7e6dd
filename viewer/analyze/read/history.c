/* gpuprof:torch.history marks -> points on the trace's clock, see history.h.
 * The marks are untrusted like the rest of the trace: every member is
 * checked, and a history that does not hold together is refused whole. */
#include "history.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/trace_scan.h" /* gp_tr_why */

/* the marks' limits (exporters/torch_marks.h) are the recorder's too */
_Static_assert(GP_TORCH_MAX_BYTES == AN_MAX_BYTES, "the marks' bytes are the reader's bytes");
/* a point may not lie after the mark that holds it by more than this: the
 * two clocks (PyTorch's time_us and the mark's) are read microseconds apart */
#define SLACK_NS 1000000000ll

/* An integer member in [lo, hi]; 0 or -EINVAL. */
static int get_int(struct json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *out,
		   char *why, size_t cap)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return gp_tr_why(why, cap, "no \"%s\"", key);
	if (!json_object_is_type(v, json_type_int))
		return gp_tr_why(why, cap, "\"%s\" is not an integer", key);
	errno = 0;
	*out = json_object_get_int64(v);
	if (errno || *out < lo || *out > hi)
		return gp_tr_why(why, cap, "\"%s\" is out of range", key);
	return 0;
}

static int get_bool(struct json_object *o, const char *key, int *out, char *why, size_t cap)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
		return gp_tr_why(why, cap, "\"%s\" is not true or false", key);
	*out = json_object_get_boolean(v);
	return 0;
}

static int grow(void **arr, size_t *cap, size_t n, size_t more, size_t size)
{
	size_t c = *cap ? *cap : 1024;
	void *p;

	while (c - n < more)
		c *= 2;
	if (c == *cap)
		return 0;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* The points of p, appended with their time_us in ts; m says where. */
static int add_points(struct an_history *h, struct json_object *p, struct an_hist_mark *m,
		      char *why, size_t cap)
{
	size_t len = json_object_array_length(p), n = len / 3;
	int64_t t = m->t_first;

	if (len % 3)
		return gp_tr_why(why, cap, "\"p\" does not hold whole points (time, allocated, reserved)");
	if (n > AN_HIST_MAX_POINTS - h->n)
		return gp_tr_why(why, cap, "more than %u points", AN_HIST_MAX_POINTS);
	if (grow((void **)&h->pt, &h->cap, h->n, n, sizeof(*h->pt)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int64_t v[3];
		struct an_hist_pt *pt = &h->pt[h->n + i];

		for (int k = 0; k < 3; k++) {
			struct json_object *x = json_object_array_get_idx(p, i * 3 + (size_t)k);

			if (!json_object_is_type(x, json_type_int))
				return gp_tr_why(why, cap, "point %zu is not three integers", i);
			errno = 0;
			v[k] = json_object_get_int64(x);
			if (errno || v[k] < 0 ||
			    (uint64_t)v[k] > (k ? AN_MAX_BYTES : (uint64_t)GP_TORCH_MAX_DT_US))
				return gp_tr_why(why, cap, "point %zu is out of range", i);
		}
		t += v[0];
		if (t > GP_TORCH_MAX_UNIX_US)
			return gp_tr_why(why, cap, "point %zu is out of range", i);
		pt->ts = t;
		pt->allocated = (uint64_t)v[1];
		pt->reserved = (uint64_t)v[2];
		pt->device = m->device;
	}
	m->first = h->n;
	m->n = n;
	m->t_last = t;
	h->n += n;
	return 0;
}

int an_history_add(struct an_history *h, const char *json, size_t n, int64_t mark_ts, char *why,
		   size_t cap)
{
	struct json_tokener *tok;
	struct json_object *o, *p;
	struct an_hist_mark m = { .mark_ts = mark_ts };
	int64_t dev, part, t0, unix_ns;
	int err;

	if (n > INT32_MAX)
		return gp_tr_why(why, cap, "too long");
	tok = json_tokener_new_ex(4);
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, json, (int)n);
	if (o && json_tokener_get_parse_end(tok) != n) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return gp_tr_why(why, cap, "not a JSON object");
	}
	if ((err = get_int(o, "device", 0, AN_MAX_DEVICES - 1, &dev, why, cap)) ||
	    (err = get_int(o, "part", 0, GP_TORCH_MAX_PARTS, &part, why, cap)) ||
	    (err = get_int(o, "t0_us", 0, GP_TORCH_MAX_UNIX_US, &t0, why, cap)) ||
	    (err = get_int(o, "unix_ns", 0, GP_TORCH_MAX_UNIX_NS, &unix_ns, why, cap)) ||
	    (err = get_bool(o, "last", &m.last, why, cap)) ||
	    (err = get_bool(o, "complete", &m.complete, why, cap)))
		goto out;
	if (!json_object_object_get_ex(o, "p", &p) || !json_object_is_type(p, json_type_array)) {
		err = gp_tr_why(why, cap, "\"p\" is not an array");
		goto out;
	}
	m.device = (uint32_t)dev;
	m.part = (uint32_t)part;
	m.t_first = t0;
	/* |terms| <= 4e18 and 1e18 (the reader's ts range): no overflow */
	m.off = mark_ts - unix_ns;
	if (grow((void **)&h->marks, &h->marks_cap, h->nmarks, 1, sizeof(*h->marks))) {
		err = -ENOMEM;
		goto out;
	}
	err = add_points(h, p, &m, why, cap);
	if (!err)
		h->marks[h->nmarks++] = m;
out:
	json_object_put(o);
	return err;
}

static int by_part(const void *x, const void *y)
{
	const struct an_hist_mark *a = x, *b = y;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->part < b->part ? -1 : a->part > b->part;
}

static int by_ts(const void *x, const void *y)
{
	const struct an_hist_pt *a = x, *b = y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	/* equal times: the history's own order (qsort is not stable) */
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int an_history_finish(struct an_history *h, char *why, size_t cap)
{
	struct an_hist_pt *pt = NULL;
	/* one clock offset for all of a device's marks, its first's, so that its
	 * points keep their order across marks (each mark's is read apart) */
	int64_t off[AN_MAX_DEVICES];
	size_t n = 0;
	int err = 0;

	if (!h->nmarks)
		return 0;
	if (h->n && !(pt = malloc(h->n * sizeof(*pt))))
		return -ENOMEM;
	qsort(h->marks, h->nmarks, sizeof(*h->marks), by_part);
	for (size_t i = 0; i < h->nmarks; i++) {
		const struct an_hist_mark *m = &h->marks[i], *prev = i ? m - 1 : NULL;
		uint64_t bit = 1ull << m->device;
		int first = !prev || prev->device != m->device;

		if (first) {
			off[m->device] = m->off;
			if (m->part != 0)
				h->gaps |= bit;
			if (m->complete)
				h->complete |= bit;
		} else {
			if (m->part == prev->part) {
				err = gp_tr_why(why, cap, "device %" PRIu32 "'s part %" PRIu32 " comes twice",
					  m->device, m->part);
				goto out;
			}
			if (prev->last) {
				err = gp_tr_why(why, cap, "device %" PRIu32 "'s history goes on after its last part",
					  m->device);
				goto out;
			}
			if (m->part != prev->part + 1)
				h->gaps |= bit; /* marks lost: the points that are here are still exact */
			if (m->n && prev->n && m->t_first < prev->t_last) {
				err = gp_tr_why(why, cap, "device %" PRIu32 "'s points go back in time", m->device);
				goto out;
			}
		}
		if (m->last)
			h->ended |= bit;
		for (size_t k = 0; k < m->n; k++) {
			struct an_hist_pt p = h->pt[m->first + k];

			p.ts = p.ts * 1000 + off[m->device];
			if (p.ts > m->mark_ts + SLACK_NS) {
				err = gp_tr_why(why, cap, "device %" PRIu32 "'s part %" PRIu32 " has points after "
					  "the mark that holds them", m->device, m->part);
				goto out;
			}
			p.seq = (uint32_t)n;
			pt[n++] = p;
		}
		h->devices |= m->n ? bit : 0;
	}
	/* each device's first point: its marks are in order now */
	for (size_t i = n; i-- > 0;)
		h->first_ts[pt[i].device] = pt[i].ts;
	if (n > 1)
		qsort(pt, n, sizeof(*pt), by_ts);
	free(h->pt);
	h->pt = pt;
	pt = NULL;
	h->n = h->cap = n;
	free(h->marks);
	h->marks = NULL;
	h->nmarks = h->marks_cap = 0;
out:
	free(pt);
	return err;
}

void an_history_free(struct an_history *h)
{
	free(h->pt);
	free(h->marks);
	memset(h, 0, sizeof(*h));
}
