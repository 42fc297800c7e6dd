/* viewer/analyze/reorder.c: events leave in the same order, at the same
 * moments, as from the plain heap the window was first written as
 * (reorder_ref.h), with the same counts (late, overflow, most held): traces
 * with watermarks, without, with events far behind (late, and before the
 * window's cut), with equal timestamps, and a window that overflows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reorder.h"
#include "reorder_ref.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct shape {
	const char *name;
	long events;
	int watermarks;     /* a watermark each flush */
	int64_t flush_ns;   /* the spread of one flush */
	int64_t step_ns;    /* how far time moves each event */
	unsigned far_pct;   /* events far behind (a few flushes), in percent */
	unsigned equal_pct; /* events on the previous event's ts, in percent */
};

/* Pops both as the source does after each line read (all: at the end);
 * each event's tid is its number. 0 if they agree. */
static int drain(struct an_reorder *a, struct ref_reorder *b, int all, long *out)
{
	struct an_ev ea, eb;

	for (;;) {
		int ga = an_reorder_pop(a, all, &ea), gb = ref_reorder_pop(b, all, &eb);

		if (ga != gb || (ga && (ea.tid != eb.tid || ea.ts != eb.ts)))
			return -1;
		if (!ga)
			return 0;
		(*out)++;
	}
}

static void run(const struct shape *sh)
{
	struct an_reorder a;
	struct ref_reorder b;
	int64_t now = 1000, last = 0;
	long popped = 0, pushed = 0;
	int ok = 1;

	an_reorder_init(&a);
	ref_reorder_init(&b);
	for (long i = 0; i < sh->events && ok; i++) {
		struct an_ev ev = { .type = AE_MARK, .tid = i };
		uint64_t x = rnd() % 100;

		now += sh->step_ns;
		if (x < sh->equal_pct)
			ev.ts = last;
		else if (x < sh->equal_pct + sh->far_pct)
			ev.ts = now - (int64_t)(rnd() % (uint64_t)(6 * sh->flush_ns + 1));
		else
			ev.ts = now - (int64_t)(rnd() % (uint64_t)(sh->flush_ns + 1));
		last = ev.ts;
		if (an_reorder_push(&a, &ev) || ref_reorder_push(&b, &ev)) {
			CHECK(!"out of memory");
			break;
		}
		pushed++;
		if (sh->watermarks && (now / sh->flush_ns) != ((now - sh->step_ns) / sh->flush_ns)) {
			/* what the recorder promises: a flush behind */
			an_reorder_watermark(&a, now - sh->flush_ns);
			ref_reorder_watermark(&b, now - sh->flush_ns);
		}
		ok = drain(&a, &b, 0, &popped) == 0;
	}
	if (ok)
		ok = drain(&a, &b, 1, &popped) == 0;
	if (!ok)
		fprintf(stderr, "%s: the windows differ after %ld events in, %ld out\n", sh->name,
			pushed, popped);
	CHECK(ok);
	CHECK_EQ_INT(popped, pushed);
	CHECK_EQ_INT(a.late, b.late);
	CHECK_EQ_INT(a.overflow, b.overflow);
	CHECK_EQ_INT(a.max_n, b.max_n);
	CHECK_EQ_INT(a.n, 0);
	an_reorder_free(&a);
	ref_reorder_free(&b);
}

int main(void)
{
	static const struct shape shapes[] = {
		{ "watermarks", 400000, 1, 500000000, 5000, 0, 0 },
		{ "watermarks, far and equal", 400000, 1, 500000000, 5000, 2, 10 },
		{ "watermarks, many late", 200000, 1, 50000000, 5000, 30, 5 },
		{ "no watermarks", 400000, 0, 500000000, 20000, 0, 0 },
		{ "no watermarks, far and equal", 400000, 0, 1000000000, 20000, 3, 10 },
		{ "small", 50, 1, 1000, 100, 20, 20 },
		/* more than AN_WINDOW_MAX within the window */
		{ "overflow", 1500000, 0, 1000000, 1, 1, 5 },
	};
	struct an_ev ev;
	struct an_reorder r;

	/* nothing held: nothing leaves */
	an_reorder_init(&r);
	CHECK_EQ_INT(an_reorder_pop(&r, 1, &ev), 0);
	an_reorder_free(&r);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		run(&shapes[i]);
	return CHECK_DONE();
}
