/* The layer tree's order and its runs of alike siblings (layers.h). */
#include "layers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/* siblings looked at past the last member found before a run is closed:
 * bounds the work where many numbered siblings are not alike */
#define ALIKE_SCAN 256
/* children matched by name at most this many places off their own */
#define ALIKE_SEARCH 64
#define ALIKE_DEPTH 48
/* a label's list of numbers: this many characters, then ",..." */
#define LABEL_NUMBERS 40

static int numeric_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *ea, *eb;

			while (*a == '0' && a[1] >= '0' && a[1] <= '9')
				a++;
			while (*b == '0' && b[1] >= '0' && b[1] <= '9')
				b++;
			for (ea = a; *ea >= '0' && *ea <= '9'; ea++)
				;
			for (eb = b; *eb >= '0' && *eb <= '9'; eb++)
				;
			if (ea - a != eb - b)
				return ea - a < eb - b ? -1 : 1;
			for (; a < ea; a++, b++)
				if (*a != *b)
					return *a < *b ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

int an_layer_name_cmp(const char *a, const char *b)
{
	int c = numeric_cmp(a, b);

	/* "7" and "07": the same number, still an order */
	return c ? c : strcmp(a, b);
}

/* a decimal number of at most 9 digits: its value; else -1 */
static long number(const char *s)
{
	long v = 0;
	size_t n = 0;

	for (; s[n]; n++) {
		if (s[n] < '0' || s[n] > '9' || n >= 9)
			return -1;
		v = v * 10 + (s[n] - '0');
	}
	return n ? v : -1;
}

static int within(uint64_t a, uint64_t b)
{
	uint64_t hi = a > b ? a : b, lo = a > b ? b : a;

	return hi - lo <= hi / AN_ALIKE_PART;
}

static int alike(const struct gp_an_node *a, const struct gp_an_node *b, int depth)
{
	if (!within(a->bytes, b->bytes) || a->nchildren != b->nchildren || depth >= ALIKE_DEPTH)
		return 0;
	for (size_t i = 0; i < a->nchildren; i++) {
		const struct gp_an_node *x = &a->children[i], *y = NULL;

		/* most often in the same place; else close by */
		for (size_t k = 0; k < b->nchildren && k <= ALIKE_SEARCH && !y; k++) {
			if (i + k < b->nchildren && !strcmp(b->children[i + k].name, x->name))
				y = &b->children[i + k];
			else if (k && k <= i && !strcmp(b->children[i - k].name, x->name))
				y = &b->children[i - k];
		}
		if (!y || !alike(x, y, depth + 1))
			return 0;
	}
	return 1;
}

/* A row: a run of alike siblings, or one sibling. */
struct row {
	struct gp_an_node **m; /* its members, borrowed from v's copy */
	size_t n;
	uint64_t bytes;
};

static int by_number(const void *x, const void *y)
{
	return an_layer_name_cmp((*(struct gp_an_node *const *)x)->name,
				 (*(struct gp_an_node *const *)y)->name);
}

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return an_layer_name_cmp(a->m[0]->name, b->m[0]->name);
}

/* "0-11 (12 alike, each 102 MiB)": the members' numbers as ranges */
static const char *run_label(struct gp_an_result *r, struct gp_an_node *const *m, size_t n,
			     uint64_t min, uint64_t max)
{
	char buf[200], lo[32], hi[32];
	size_t len = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && number(m[j + 1]->name) == number(m[j]->name) + 1)
			j++;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s%s%s", i ? "," : "", m[i]->name,
					j > i ? "-" : "", j > i ? m[j]->name : "");
		i = j + 1;
		if (i < n && len >= LABEL_NUMBERS) {
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",...");
			break;
		}
	}
	an_fmt_bytes(lo, sizeof(lo), min);
	an_fmt_bytes(hi, sizeof(hi), max);
	if (min == max || !strcmp(lo, hi))
		snprintf(buf + len, sizeof(buf) - len, " (%zu alike, each %s)", n, hi);
	else
		snprintf(buf + len, sizeof(buf) - len, " (%zu alike, each %s to %s)", n, lo, hi);
	return gp_an_strndup(r, buf, strlen(buf));
}

int an_layers_order(struct gp_an_result *r, struct gp_an_node *v, size_t n, uint64_t whole)
{
	struct gp_an_node *copy = NULL, **slots = NULL;
	struct row *rows = NULL;
	char *taken = NULL;
	size_t nrows = 0, k = 0;
	int rc = -ENOMEM, oom = 0;

	if (n < 2)
		return 0;
	copy = malloc(n * sizeof(*copy));
	slots = malloc(n * sizeof(*slots));
	rows = malloc(n * sizeof(*rows));
	taken = calloc(n, 1);
	if (!copy || !slots || !rows || !taken)
		goto out;
	memcpy(copy, v, n * sizeof(*v));
	/* v is largest first: a run's first is its largest, and its members
	 * are within reach after it */
	for (size_t i = 0; i < n; i++) {
		struct row *w;

		if (taken[i])
			continue;
		taken[i] = 1;
		w = &rows[nrows++];
		w->m = &slots[k];
		w->n = 1;
		w->bytes = copy[i].bytes;
		slots[k++] = &copy[i];
		if (number(copy[i].name) < 0)
			continue;
		for (size_t j = i + 1, seen = 0; j < n && seen < ALIKE_SCAN && within(copy[i].bytes, copy[j].bytes);
		     j++, seen++) {
			if (taken[j] || number(copy[j].name) < 0 || !alike(&copy[i], &copy[j], 0))
				continue;
			taken[j] = 1;
			slots[k++] = &copy[j];
			w->n++;
			w->bytes += copy[j].bytes;
			seen = 0;
		}
	}
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	k = 0;
	for (size_t i = 0; i < nrows; i++) {
		struct row *w = &rows[i];
		struct gp_an_node *first = &v[k];
		uint64_t count = 0, min = UINT64_MAX, max = 0;

		if (w->n > 1)
			qsort(w->m, w->n, sizeof(*w->m), by_number);
		for (size_t j = 0; j < w->n; j++) {
			v[k++] = *w->m[j];
			count += w->m[j]->count;
			min = w->m[j]->bytes < min ? w->m[j]->bytes : min;
			max = w->m[j]->bytes > max ? w->m[j]->bytes : max;
		}
		if (w->n < 2)
			continue;
		first->alike.n = w->n;
		first->alike.bytes = w->bytes;
		first->alike.count = count;
		first->alike.min = min;
		first->alike.max = max;
		first->alike.share = gp_an_round(whole ? (double)w->bytes / (double)whole : 0.0, 4);
		first->alike.label = run_label(r, w->m, w->n, min, max);
		oom |= !first->alike.label;
	}
	rc = oom ? -ENOMEM : 0;
out:
	free(copy);
	free(slots);
	free(rows);
	free(taken);
	return rc;
}
