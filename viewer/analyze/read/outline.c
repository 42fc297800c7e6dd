/* The flight recorder's outline, kept per device as it is read (outline.h). */
#include "outline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/json_scan.h"
#include "exporters/trace_scan.h"

/* A step's point: allocated at its mark, its peak */
static void point_add(struct an_outline_dev *d, const struct an_outline_rec *r)
{
	struct an_step_pt *pt = an_series_mark(d->pts, &d->npts, &d->stride, &d->marks);

	if (!pt)
		return;
	pt->step = r->step > UINT32_MAX ? UINT32_MAX : (uint32_t)r->step;
	pt->ts = r->end_ns;
	pt->fw = r->allocated;
	pt->peak = r->allocated_peak;
	pt->reserved = r->reserved;
	pt->reserved_known = r->reserved_peak != 0;
	/* the process's device memory: CUDA's allocations, PyTorch's segments
	 * among them */
	pt->total = r->device_bytes > r->allocated ? r->device_bytes : r->allocated;
}

static void holders_clear(struct an_strtab *st, struct an_outline_holder *h, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		an_str_unref(st, h[i].name);
	*n = 0;
}

/* {name: bytes, ...} into h (at most AN_OUTLINE_HOLDERS kept). 0, -ENOMEM,
 * -EINVAL with why. */
static int holders_read(struct an_strtab *st, const char *p, size_t n, struct an_outline_holder *h,
			size_t *nh, const char *key, char *why, size_t cap)
{
	struct gp_json_cur c = { (const unsigned char *)p, (const unsigned char *)p + n, NULL, 4, 32 };
	struct gp_json_val name, v = { 0 }; /* v: gcc cannot tell gp_json_value sets it */
	char scratch[AN_STR_MAX + 8];

	holders_clear(st, h, nh);
	if (c.p >= c.end || *c.p != '{')
		goto bad;
	c.p++;
	gp_json_ws(&c);
	if (c.p < c.end && *c.p == '}')
		return 0;
	for (;;) {
		const char *s;
		size_t len;
		uint64_t bytes;

		if (gp_json_member_name(&c, &name) || gp_json_value(&c, 1, &v) || gp_jv_u64(&v, &bytes))
			goto bad;
		if (name.n > AN_STR_MAX || gp_jv_str(&name, scratch, &s, &len))
			goto bad;
		if (*nh < AN_OUTLINE_HOLDERS) {
			if (!(h[*nh].name = an_str_intern(st, s, len)))
				return -ENOMEM;
			h[(*nh)++].bytes = bytes;
		}
		gp_json_ws(&c);
		if (c.p < c.end && *c.p == ',') {
			c.p++;
			gp_json_ws(&c);
			continue;
		}
		if (c.p < c.end && *c.p == '}')
			return 0;
		goto bad;
	}
bad:
	snprintf(why, cap, "\"%s\" is not {name: bytes, ...}", key);
	return -EINVAL;
}

int an_outline_add(struct an_outline *o, struct an_strtab *st, const struct an_outline_rec *r,
		   const char *by_category, size_t cat_len, const char *by_layer, size_t layer_len,
		   char *why, size_t cap)
{
	struct an_outline_dev *d;
	int err;

	if (r->device >= AN_MAX_DEVICES || r->closed_by < 0 || r->closed_by > 2) {
		snprintf(why, cap, "device or closed_by out of range");
		return -EINVAL;
	}
	if (!(d = o->dev[r->device])) {
		if (!(d = calloc(1, sizeof(*d))))
			return -ENOMEM;
		d->begin_ns = r->begin_ns;
		o->dev[r->device] = d;
	}
	d->records++;
	if (r->begin_ns < d->begin_ns)
		d->begin_ns = r->begin_ns;
	if (r->end_ns > d->end_ns)
		d->end_ns = r->end_ns;
	if (r->closed_by == 0) {
		d->steps++;
		if (!d->first_step)
			d->first_step = r->step;
		d->last_step = r->step;
		point_add(d, r);
	}
	if (r->allocated_peak > d->allocated_peak || d->records == 1) {
		if ((err = holders_read(st, by_category, cat_len, d->cat, &d->ncat, "by_category", why, cap)) ||
		    (err = holders_read(st, by_layer, layer_len, d->layer, &d->nlayer, "by_layer", why, cap)))
			return err;
		d->allocated_peak = r->allocated_peak;
		d->peak_ns = r->peak_ns;
		d->peak_step = r->step;
		d->peak_closed_by = r->closed_by;
	}
	if (r->reserved_peak > d->reserved_peak)
		d->reserved_peak = r->reserved_peak;
	if (r->device_peak > d->device_peak)
		d->device_peak = r->device_peak;
	if (r->ooms) {
		if (!d->ooms) {
			d->first_oom_step = r->step;
			d->first_oom_ns = r->end_ns;
		}
		d->ooms += r->ooms;
		if (r->oom_bytes > d->oom_bytes)
			d->oom_bytes = r->oom_bytes;
	}
	if (r->dropped_segments > d->dropped_segments)
		d->dropped_segments = r->dropped_segments;
	if (r->dropped_bytes > d->dropped_bytes)
		d->dropped_bytes = r->dropped_bytes;
	return 0;
}

void an_outline_free(struct an_outline *o, struct an_strtab *st)
{
	for (int i = 0; i < AN_MAX_DEVICES; i++) {
		struct an_outline_dev *d = o->dev[i];

		if (!d)
			continue;
		holders_clear(st, d->cat, &d->ncat);
		holders_clear(st, d->layer, &d->nlayer);
		free(d);
		o->dev[i] = NULL;
	}
}
