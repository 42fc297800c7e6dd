/* Advice about a run as a whole (advice.h), where its trace shows the
 * cause, whether or not anything failed: activations kept for a backward
 * that never came (torch.no_grad), each step needing more than the last
 * without a leak, and PyTorch's cache in pieces too small (expandable
 * segments). The rules are in CATEGORIES.md ("Advice about the run"). */
#include "advice.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

/* PyTorch's expandable segments map device memory in pages of 20 MiB (its
 * large pool's; the small pool's are 2 MiB). */
#define EXPANDABLE_PAGE (20ull << 20)
/* What advice is worth giving: no_grad's when the activations kept are a
 * quarter of the peak or more; expandable segments' when they would save a
 * tenth of the reserved peak and 512 MiB or more (less is not worth a
 * setting). */
#define KEPT_SHARE 4
#define SAVE_SHARE 10
#define SAVE_MIN (512ull << 20)

void an_kept_of(const struct an_set *s, struct an_kept *k)
{
	const struct an_rec *last = NULL;

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < s->n; i++) {
		const struct an_rec *r = s->m[i].r;

		if (s->m[i].cat != CAT_ACTIVATIONS || !(r->flags & R_KEPT_NO_BACKWARD))
			continue;
		k->bytes += r->bytes;
		k->count++;
		if (!last || r->seq > last->seq)
			last = r;
	}
	/* The newest of them may be the forward's output, which the program
	 * goes on to use (its logits, its prediction) with or without
	 * autograd: it is not counted. */
	if (last) {
		k->bytes -= last->bytes;
		k->count--;
	}
}

static void no_grad(struct an_adv_list *a, const struct gp_an_device *d, const struct an_kept *k)
{
	char text[1024], x[32], y[32];

	if (!d->has_peak || k->count < 2 || k->bytes < d->peak.bytes / KEPT_SHARE)
		return;
	an_fmt_bytes(x, sizeof(x), k->bytes);
	an_fmt_bytes(y, sizeof(y), d->peak.bytes);
	snprintf(text, sizeof(text),
		 "%s of the peak's %s are %" PRIu64 " activations made in a forward that no backward "
		 "followed, kept until its output was dropped: autograd saved them for a backward "
		 "that never came; run inference and evaluation under torch.no_grad() or "
		 "torch.inference_mode(), which free each as soon as the next layer has used it: "
		 "the peak would be up to %s lower", x, y, k->count, x);
	an_adv_add(a, GP_AN_ADVICE_NO_GRAD, k->bytes, d->peak.bytes, text);
}

static void growth(struct an_adv_list *a, const struct gp_an_device *d)
{
	const struct gp_an_growth *g = &d->growth;
	char text[1024], v[32], w[32], x[32], y[32], z[32], fit[160] = "";

	/* a leak raises each step's peak by what it leaves: its own advice;
	 * here the peak must grow beyond what stays between steps */
	if (!g->present || d->leak.verdict == GP_AN_LEAK_FOUND ||
	    (double)(g->last_peak - g->first_peak) <
		    2.0 * ((double)g->live_last - (double)g->live_first))
		return;
	an_fmt_bytes(x, sizeof(x), (uint64_t)g->bytes_per_step);
	an_fmt_bytes(y, sizeof(y), g->first_peak);
	an_fmt_bytes(z, sizeof(z), g->last_peak);
	if (g->next_peak.known && d->capacity.known && g->next_peak.v > d->capacity.v) {
		char n[32], c[32];

		an_fmt_bytes(n, sizeof(n), g->next_peak.v);
		an_fmt_bytes(c, sizeof(c), d->capacity.v);
		snprintf(fit, sizeof(fit), "; at that rate the next step (%s) would not fit the device (%s)",
			 n, c);
	}
	an_fmt_bytes(w, sizeof(w), g->live_first);
	an_fmt_bytes(v, sizeof(v), g->live_last);
	snprintf(text, sizeof(text),
		 "each step since step %" PRId64 " peaked higher than the one before (%s to %s, "
		 "x%.2f a step, +%s on average) while live memory between steps went from %s to %s: "
		 "not a leak, but a step's work growing with its input (a batch size, a sequence "
		 "length, a number of items that grows from step to step)%s; if that is meant, the "
		 "largest input sets the peak: bound it, or run the largest first; if not, look at "
		 "what sets a step's size (a batch grown on purpose, padding to the longest input so "
		 "far, a list concatenated each step)", g->since_step, y, z, g->factor_per_step, x, w, v,
		 fit);
	an_adv_add(a, GP_AN_ADVICE_GROWTH, (uint64_t)g->bytes_per_step, g->last_peak, text);
}

/* With expandable segments PyTorch maps pages into one segment per stream
 * and pool and extends it where its free end is too small, instead of
 * reserving a segment beside the others; a freed block merges with its
 * free neighbours. What it reserves then comes near the most allocated at
 * once, in whole pages: the allocated peak rounded up to 20 MiB is what it
 * would reserve at least (holes between live blocks may remain), so the
 * reserved peak less that is what it would save at most. */
static void expandable(struct an_adv_list *a, const struct gp_an_device *d)
{
	const struct gp_an_split *sp = &d->summary.split;
	const struct gp_an_amount *al = &d->summary.allocated, *rs = &d->summary.reserved;
	uint64_t need, save;
	char text[1024], w[32], x[32], y[32], z[32];

	if (!sp->known || sp->expandable || !sp->segments || !al->peak.known || !rs->peak.known)
		return;
	need = al->peak.v / EXPANDABLE_PAGE * EXPANDABLE_PAGE;
	if (need < al->peak.v)
		need += EXPANDABLE_PAGE; /* past 2^64 only in a hostile trace: then no advice */
	if (rs->peak.v <= need || need < al->peak.v)
		return;
	save = rs->peak.v - need;
	if (save < rs->peak.v / SAVE_SHARE || save < SAVE_MIN)
		return;
	an_fmt_bytes(w, sizeof(w), sp->bytes);
	an_fmt_bytes(x, sizeof(x), rs->peak.v);
	an_fmt_bytes(y, sizeof(y), al->peak.v);
	an_fmt_bytes(z, sizeof(z), save);
	snprintf(text, sizeof(text),
		 "PyTorch reserved %" PRIu64 " segment%s (%s) while its cache held enough free bytes "
		 "for the block each was made for, split in pieces too small: fragmentation; "
		 "reserved peaked at %s for at most %s allocated; "
		 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets PyTorch grow a segment "
		 "instead of reserving new ones: reserved would come near the allocated peak in "
		 "20 MiB pages, up to %s less", sp->segments, sp->segments == 1 ? "" : "s", w, x,
		 y, z);
	an_adv_add(a, GP_AN_ADVICE_EXPANDABLE_SEGMENTS, save, rs->peak.v, text);
}

int an_advise_run(struct gp_an_result *r, const struct gp_an_device *d, const struct an_kept *k,
		  struct gp_an_advice **out, size_t *nout)
{
	struct an_adv_list a = { .r = r };

	if (d->mode != GP_AN_MODE_CUDA)
		no_grad(&a, d, k);
	growth(&a, d);
	expandable(&a, d);
	return an_adv_finish(&a, out, nout);
}
