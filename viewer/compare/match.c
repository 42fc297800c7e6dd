/* Which process/GPU of NEW is which of BASE. Process ids change from run
 * to run, so they cannot be the key. In order:
 *   1. the torch.distributed rank and the device, where both sides know
 *      the rank (traces[].rank: torchrun's RANK, recorded in gpuprof.meta);
 *   2. the device index and the command line: torchrun's workers differ by
 *      device; several processes with the same both (a launcher and its
 *      worker on one GPU) are taken in the order they started;
 *   3. the device alone, when exactly one process of each side is left on
 *      it: the command changed between the runs (a new flag), said in a note.
 * Pairs come in the order BASE's processes started. What is left is
 * reported: in BASE only (missing in NEW: a failure, a GPU
 * the new run no longer reached is no improvement), or in NEW only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"

static int same_str(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

static int start_cmp(const void *x, const void *y, void *side)
{
	const struct cmp_side *s = side;
	const struct cmp_unit *a = &s->u[*(const size_t *)x];
	const struct cmp_unit *b = &s->u[*(const size_t *)y];

	if (a->tr->start_unix_ns != b->tr->start_unix_ns)
		return a->tr->start_unix_ns < b->tr->start_unix_ns ? -1 : 1;
	if (a->dev->pid != b->dev->pid)
		return a->dev->pid < b->dev->pid ? -1 : 1;
	return a->dev->device - b->dev->device;
}

static size_t *start_order(const struct cmp_side *s)
{
	size_t *idx = malloc((s->n ? s->n : 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		idx[i] = i;
	qsort_r(idx, s->n, sizeof(*idx), start_cmp, (void *)s);
	return idx;
}

/* units of s, not yet matched, like u by device and command */
static size_t count_like(const struct cmp_side *s, const int *used, const struct cmp_unit *u)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += !used[i] && s->u[i].dev->device == u->dev->device && same_str(s->u[i].tr->cmdline, u->tr->cmdline);
	return n;
}

void cmp_pairs_free(struct cmp_pair *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cmp_notes_free(&p[i].notes);
		free(p[i].cats);
		free(p[i].layers);
		free(p[i].allocs);
	}
	free(p);
}

int cmp_match(const struct cmp_side *base, const struct cmp_side *new_, struct cmp_pair **out,
	      size_t *nout)
{
	size_t nb = base->n, nn = new_->n, np = 0;
	int *ub = calloc(nb + 1, sizeof(*ub)), *un = calloc(nn + 1, sizeof(*un));
	int *several = calloc(nb + 1, sizeof(*several));
	size_t *with = calloc(nb + 1, sizeof(*with)); /* base unit -> new unit + 1 */
	const char **how = calloc(nb + 1, sizeof(*how));
	size_t *ob = start_order(base), *on = start_order(new_);
	struct cmp_pair *p = calloc(nb + nn + 1, sizeof(*p));
	int rc = -ENOMEM;

	*out = NULL;
	*nout = 0;
	if (!ub || !un || !several || !with || !how || !ob || !on || !p)
		goto cleanup;

	for (size_t i = 0; i < nb; i++) {
		const struct cmp_unit *b = &base->u[i];
		size_t hit = 0, nhits = 0, same = 0;

		if (b->tr->rank < 0)
			continue;
		for (size_t j = 0; j < nb; j++)
			same += base->u[j].tr->rank == b->tr->rank && base->u[j].dev->device == b->dev->device;
		for (size_t j = 0; j < nn; j++)
			if (!un[j] && new_->u[j].tr->rank == b->tr->rank && new_->u[j].dev->device == b->dev->device)
				hit = j, nhits++;
		if (same == 1 && nhits == 1) {
			ub[i] = un[hit] = 1;
			with[i] = hit + 1;
			how[i] = "rank and device";
		}
	}

	/* decided before any is matched: the last of a group is no less "in
	 * order" than the first */
	for (size_t i = 0; i < nb; i++)
		several[i] = !ub[i] && (count_like(base, ub, &base->u[i]) > 1 ||
					count_like(new_, un, &base->u[i]) > 1);
	for (size_t k = 0; k < nb; k++) {
		size_t i = ob[k];
		const struct cmp_unit *b = &base->u[i];

		if (ub[i])
			continue;
		for (size_t m = 0; m < nn; m++) {
			size_t j = on[m];

			if (un[j] || new_->u[j].dev->device != b->dev->device ||
			    !same_str(new_->u[j].tr->cmdline, b->tr->cmdline))
				continue;
			ub[i] = un[j] = 1;
			with[i] = j + 1;
			how[i] = several[i] ? "device, command and start order" : "device and command";
			break;
		}
	}

	for (size_t i = 0; i < nb; i++) {
		size_t hit = 0, nhits = 0, same = 0;

		if (ub[i])
			continue;
		for (size_t j = 0; j < nb; j++)
			same += !ub[j] && base->u[j].dev->device == base->u[i].dev->device;
		for (size_t j = 0; j < nn; j++)
			if (!un[j] && new_->u[j].dev->device == base->u[i].dev->device)
				hit = j, nhits++;
		if (same == 1 && nhits == 1) {
			ub[i] = un[hit] = 1;
			with[i] = hit + 1;
			how[i] = "device (the command differs)";
		}
	}

	for (size_t k = 0; k < nb; k++) {
		size_t i = ob[k];
		struct cmp_pair *q = &p[np++];

		q->b = &base->u[i];
		if (with[i]) {
			q->n = &new_->u[with[i] - 1];
			q->matched_by = how[i];
			if (!same_str(q->b->tr->cmdline, q->n->tr->cmdline) &&
			    cmp_note(&q->notes, "the command lines differ: BASE '%.200s', NEW '%.200s'",
				     q->b->tr->cmdline ? q->b->tr->cmdline : "(not known)",
				     q->n->tr->cmdline ? q->n->tr->cmdline : "(not known)"))
				goto cleanup;
			if (strcmp(how[i], "device, command and start order") == 0 &&
			    cmp_note(&q->notes, "several processes ran this command on GPU %d: "
				     "matched in the order they started", q->b->dev->device))
				goto cleanup;
		}
	}
	for (size_t m = 0; m < nn; m++)
		if (!un[on[m]])
			p[np++].n = &new_->u[on[m]];
	*out = p;
	*nout = np;
	p = NULL;
	rc = 0;
cleanup:
	if (p)
		cmp_pairs_free(p, np);
	free(ub);
	free(un);
	free(several);
	free(with);
	free(how);
	free(ob);
	free(on);
	return rc;
}
