/* PyTorch's memory marks -> counter points (see torch_counters.h). The
 * limits are gpuprof analyze's (exporters/torch_marks.h), so that a mark
 * the analyzer refuses draws nothing either. */
#include "torch_counters.h"

#include "json_scan.h"
#include "torch_marks.h"
#include "trace_format.h"

#include <errno.h>
#include <string.h>

const char *const gp_tc_names[GP_TC_TRACKS] = { GP_EV_TORCH_SAMPLED, GP_EV_TORCH_HISTORY };

static const char sampled_prefix[] = GP_TORCH_MEMORY_PREFIX;
static const char history_prefix[] = GP_TORCH_HISTORY_PREFIX;

void gp_tc_init(struct gp_torch_counters *tc)
{
	memset(tc, 0, sizeof(*tc));
	tc->max_history_points = GP_TC_MAX_HISTORY_POINTS;
	for (int t = 0; t < GP_TC_TRACKS; t++)
		for (int d = 0; d < GP_TC_MAX_DEVICES; d++)
			tc->last_ts[t][d] = INT64_MIN;
}

/* ---- a strict reader of the marks' one-level JSON objects ----
 * on json_scan.h: values are unsigned integers, arrays of them, or true and
 * false; no strings; keys are plain lowercase names, each at most once. */

static int eat(struct gp_json_cur *c, char ch)
{
	gp_json_ws(c);
	if (c->p >= c->end || *c->p != (unsigned char)ch)
		return 0;
	c->p++;
	return 1;
}

/* A JSON number that is a plain non-negative integer, at most max. */
static int uint_at(struct gp_json_cur *c, uint64_t max, uint64_t *out)
{
	gp_json_ws(c);
	return gp_json_uint(c, max, out);
}

enum key { K_OTHER, K_ALLOCATED, K_RESERVED, K_DEVICE, K_PART, K_T0, K_UNIX_NS, K_P, K_COUNT };

static enum key key_of(const char *k, size_t n)
{
	static const char *const names[K_COUNT] = {
		"", "allocated", "reserved", "device", "part", "t0_us", "unix_ns", "p",
	};
	for (int i = 1; i < K_COUNT; i++)
		if (strlen(names[i]) == n && memcmp(names[i], k, n) == 0)
			return (enum key)i;
	return K_OTHER;
}

struct fields {
	uint64_t v[K_COUNT];
	unsigned seen; /* bit per enum key */
	struct gp_json_cur p;  /* the inside of "p"'s array */
	size_t p_len;  /* its numbers */
};

/* An array of integers: where its numbers are, and how many. */
static int uint_array(struct gp_json_cur *c, struct gp_json_cur *inside, size_t *count)
{
	uint64_t x;
	size_t n = 0;

	*inside = *c; /* its limits */
	if (eat(c, ']'))
		goto done;
	for (;;) {
		if (uint_at(c, UINT64_MAX, &x))
			return -EINVAL;
		n++;
		if (eat(c, ']'))
			break;
		if (!eat(c, ','))
			return -EINVAL;
	}
done:
	inside->end = c->p;
	*count = n;
	return 0;
}

static int scan(struct gp_json_cur *c, struct fields *f)
{
	static const uint64_t max[K_COUNT] = {
		[K_ALLOCATED] = GP_TORCH_MAX_BYTES, [K_RESERVED] = GP_TORCH_MAX_BYTES,
		[K_DEVICE] = GP_TC_MAX_DEVICES - 1, [K_PART] = GP_TORCH_MAX_PARTS,
		[K_T0] = GP_TORCH_MAX_UNIX_US, [K_UNIX_NS] = GP_TORCH_MAX_UNIX_NS,
	};

	if (!eat(c, '{'))
		return -EINVAL;
	if (eat(c, '}'))
		goto end;
	for (;;) {
		const unsigned char *k;
		enum key which;
		uint64_t x;

		if (!eat(c, '"'))
			return -EINVAL;
		k = c->p;
		while (c->p < c->end && ((*c->p >= 'a' && *c->p <= 'z') || *c->p == '_' ||
					 (*c->p >= '0' && *c->p <= '9')))
			c->p++;
		if (c->p >= c->end || *c->p != '"')
			return -EINVAL;
		which = key_of((const char *)k, (size_t)(c->p - k));
		c->p++;
		if (which != K_OTHER && (f->seen & 1u << which))
			return -EINVAL; /* twice: which one would a reader take? */
		if (!eat(c, ':'))
			return -EINVAL;
		gp_json_ws(c);
		if (c->p < c->end && *c->p == '[') {
			struct gp_json_cur inside;
			size_t n;
			c->p++;
			if (uint_array(c, &inside, &n))
				return -EINVAL;
			if (which == K_P) {
				f->p = inside;
				f->p_len = n;
			} else if (which != K_OTHER) {
				return -EINVAL;
			}
		} else if (!GP_JSON_LITERAL(c, "true") || !GP_JSON_LITERAL(c, "false")) {
			if (which != K_OTHER)
				return -EINVAL;
		} else {
			if (which == K_P || uint_at(c, which == K_OTHER ? UINT64_MAX : max[which], &x))
				return -EINVAL;
			f->v[which] = x;
		}
		f->seen |= 1u << which;
		if (eat(c, '}'))
			break;
		if (!eat(c, ','))
			return -EINVAL;
	}
end:
	gp_json_ws(c);
	return c->p == c->end ? 0 : -EINVAL;
}

static int has(const struct fields *f, unsigned keys)
{
	return (f->seen & keys) == keys;
}

#define BIT(k) (1u << (k))

static void give(struct gp_torch_counters *tc, enum gp_tc_track track, const struct gp_tc_point *pt,
		 gp_tc_emit_fn emit, void *ctx)
{
	int64_t *last = &tc->last_ts[track][pt->device];

	if (pt->ts < 0 || pt->ts < *last ||
	    (track == GP_TC_HISTORY && tc->history_points >= tc->max_history_points)) {
		tc->left_out++;
		return;
	}
	*last = pt->ts;
	tc->points++;
	if (track == GP_TC_HISTORY)
		tc->history_points++;
	emit(ctx, track, pt);
}

static int sampled(struct gp_torch_counters *tc, struct gp_json_cur *c, int64_t ts, gp_tc_emit_fn emit,
		   void *ctx)
{
	struct fields f = { 0 };
	struct gp_tc_point pt;

	/* no device: device 0 (the first traces' marks had none; analyze reads them so) */
	if (scan(c, &f) || !has(&f, BIT(K_ALLOCATED) | BIT(K_RESERVED)) || (f.seen & BIT(K_P)))
		return -EINVAL;
	pt.ts = ts;
	pt.allocated = f.v[K_ALLOCATED];
	pt.reserved = f.v[K_RESERVED];
	pt.device = (uint32_t)f.v[K_DEVICE];
	give(tc, GP_TC_SAMPLED, &pt, emit, ctx);
	return 1;
}

/* Walks "p"'s (dt, allocated, reserved) triples; with emit NULL only checks
 * them. t: PyTorch's time of the point, µs since the Unix epoch. */
static int walk(struct gp_torch_counters *tc, const struct fields *f, int64_t off,
		gp_tc_emit_fn emit, void *ctx)
{
	struct gp_json_cur c = f->p;
	uint64_t t = f->v[K_T0];

	for (size_t i = 0; i < f->p_len; i += 3) {
		uint64_t dt, a, r;
		if ((i && !eat(&c, ',')) || uint_at(&c, GP_TORCH_MAX_DT_US, &dt) || !eat(&c, ',') ||
		    uint_at(&c, GP_TORCH_MAX_BYTES, &a) || !eat(&c, ',') || uint_at(&c, GP_TORCH_MAX_BYTES, &r))
			return -EINVAL;
		t += dt;
		if (t > GP_TORCH_MAX_UNIX_US)
			return -EINVAL;
		if (emit) {
			/* |t * 1000| <= 4e18 and |off| <= 4e18 + the mark's ts: no overflow */
			struct gp_tc_point pt = { (int64_t)t * 1000 + off, a, r, (uint32_t)f->v[K_DEVICE] };
			give(tc, GP_TC_HISTORY, &pt, emit, ctx);
		}
	}
	return 0;
}

static int history(struct gp_torch_counters *tc, struct gp_json_cur *c, int64_t ts, gp_tc_emit_fn emit,
		   void *ctx)
{
	struct fields f = { 0 };
	unsigned dev;
	int64_t off;

	if (scan(c, &f) ||
	    !has(&f, BIT(K_DEVICE) | BIT(K_PART) | BIT(K_T0) | BIT(K_UNIX_NS) | BIT(K_P)) ||
	    f.p_len % 3 || walk(tc, &f, 0, NULL, NULL))
		return -EINVAL;
	dev = (unsigned)f.v[K_DEVICE];
	off = ts - (int64_t)f.v[K_UNIX_NS];
	if (!(tc->hist_off_set & 1ull << dev)) {
		tc->hist_off[dev] = off;
		tc->hist_off_set |= 1ull << dev;
	}
	walk(tc, &f, tc->hist_off[dev], emit, ctx);
	return 1;
}

int gp_tc_mark(struct gp_torch_counters *tc, const char *text, size_t len, int64_t ts,
	       gp_tc_emit_fn emit, void *ctx)
{
	size_t ns = sizeof(sampled_prefix) - 1, nh = sizeof(history_prefix) - 1;
	/* nothing nests: "p"'s array is read here, not by the scanner */
	struct gp_json_cur c = { (const unsigned char *)text, (const unsigned char *)text + len, NULL,
				 1, SIZE_MAX };
	int r;

	if (len >= ns && memcmp(text, sampled_prefix, ns) == 0) {
		c.p += ns;
		r = sampled(tc, &c, ts, emit, ctx);
	} else if (len >= nh && memcmp(text, history_prefix, nh) == 0) {
		c.p += nh;
		r = history(tc, &c, ts, emit, ctx);
	} else {
		return 0;
	}
	if (r < 0)
		tc->bad_marks++;
	return r;
}
