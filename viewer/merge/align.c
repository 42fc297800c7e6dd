/* The offset between two hosts' clocks from the NCCL kernels of one trace
 * of each (merge.h). A collective's kernel ends on every rank at nearly the
 * same instant (each waits for the others' data), while it may start far
 * apart (a rank that arrives early waits inside it), so the ends are
 * matched, not the starts. The median and the median absolute deviation
 * stand up to the few matches a late launch or a preemption spoils. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "merge.h"

#define MIN_MATCHED 3

static int cmp_kernel(const void *pa, const void *pb)
{
	const struct gp_merge_kernel *a = pa, *b = pb;

	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* Sorts v; the lower and upper middle's mean for an even n. */
static int64_t median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* The run of kernels named as v[i] from i on. */
static size_t run_len(const struct gp_merge_kernel *v, size_t n, size_t i)
{
	size_t j = i;

	while (j < n && v[j].name == v[i].name)
		j++;
	return j - i;
}

int gp_merge_fit_collectives(struct gp_merge_kernel *ref, size_t nref,
			     struct gp_merge_kernel *other, size_t nother,
			     const char *const *names, struct gp_merge_fit *fit)
{
	size_t i = 0, j = 0, m = 0;
	int64_t *d, med;

	fit->offset_ns = fit->residual_ns = 0;
	fit->matched = 0;
	fit->why[0] = '\0';
	/* a trace with no NCCL kernel gives no array at all: nothing to sort */
	if (nref)
		qsort(ref, nref, sizeof(*ref), cmp_kernel);
	if (nother)
		qsort(other, nother, sizeof(*other), cmp_kernel);
	d = malloc((nref < nother ? nref : nother) * sizeof(*d) + sizeof(*d));
	if (!d)
		return -ENOMEM;
	while (i < nref && j < nother) {
		size_t a = run_len(ref, nref, i), b = run_len(other, nother, j);

		if (ref[i].name != other[j].name) {
			/* a name one side lacks: that rank was in no such collective */
			if (ref[i].name < other[j].name)
				i += a;
			else
				j += b;
			continue;
		}
		if (a != b) {
			/* a collective missed or a subgroup's: the k-th are not the same one */
			snprintf(fit->why, sizeof(fit->why), "%s: %zu kernels on one host, %zu on the other",
				 names[ref[i].name], a, b);
			free(d);
			return -EINVAL;
		}
		/* both positive (absolute times): the difference does not overflow */
		for (size_t k = 0; k < a; k++)
			d[m++] = ref[i + k].end_ns - other[j + k].end_ns;
		i += a;
		j += b;
	}
	if (!nref || !nother) {
		snprintf(fit->why, sizeof(fit->why), "%s", !nref && !nother ? "neither host's trace has one"
							   : !nref ? "the reference host's trace has none"
								   : "this host's trace has none");
		free(d);
		return -EINVAL;
	}
	if (m < MIN_MATCHED) {
		snprintf(fit->why, sizeof(fit->why), "%zu NCCL kernel%s matched, %d needed", m,
			 m == 1 ? "" : "s", MIN_MATCHED);
		free(d);
		return -EINVAL;
	}
	med = median(d, m);
	for (size_t k = 0; k < m; k++)
		d[k] = d[k] >= med ? d[k] - med : med - d[k];
	fit->offset_ns = med;
	fit->residual_ns = median(d, m);
	fit->matched = m;
	free(d);
	return 0;
}
