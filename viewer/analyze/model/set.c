/* Sets of allocations and groupings by name (set.h). */
#include "set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void an_grp_add(struct an_grpset *g, uint64_t key, const char *name, uint64_t bytes)
{
	struct an_grp *e = gp_u64map_get(&g->by_key, key);

	if (!e) {
		if (g->n == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 16;
			struct an_grp **l = realloc(g->list, cap * sizeof(*l));

			if (!l) {
				g->oom = 1;
				return;
			}
			g->list = l;
			g->cap = cap;
		}
		e = calloc(1, sizeof(*e));
		if (!e || gp_u64map_put(&g->by_key, key, e)) {
			free(e);
			g->oom = 1;
			return;
		}
		e->name = name;
		g->list[g->n++] = e;
	}
	e->bytes += bytes;
	e->count++;
}

static int grp_cmp(const void *x, const void *y)
{
	const struct an_grp *a = *(struct an_grp *const *)x, *b = *(struct an_grp *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->name, b->name);
}

void an_grp_sort(struct an_grpset *g)
{
	if (g->n)
		qsort(g->list, g->n, sizeof(*g->list), grp_cmp);
}

void an_grp_free(struct an_grpset *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->list[i]);
	free(g->list);
	gp_u64map_free(&g->by_key);
	memset(g, 0, sizeof(*g));
}

void an_set_free(struct an_analysis *a, struct an_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		an_str_unref(&a->st, s->m[i].label);
	free(s->m);
	memset(s, 0, sizeof(*s));
}

int an_set_make(struct an_analysis *a, const struct an_proc *p, struct an_rec **recs, size_t n,
		struct an_set *s)
{
	memset(s, 0, sizeof(*s));
	s->torch = p->mode != MODE_CUDA;
	s->steps = p->has_steps;
	if (!n)
		return 0;
	s->m = calloc(n, sizeof(*s->m));
	if (!s->m)
		return -ENOMEM;
	s->n = n;
	for (size_t i = 0; i < n; i++) {
		char label[256];

		s->m[i].r = recs[i];
		s->bytes += recs[i]->bytes;
		if (!s->torch)
			continue;
		s->m[i].cat = an_classify(p, recs[i], label, sizeof(label));
		s->cat_bytes[s->m[i].cat] += recs[i]->bytes;
		if (s->m[i].cat == CAT_OTHER &&
		    !(s->m[i].label = an_str_intern(&a->st, label, strlen(label))))
			return -ENOMEM;
	}
	return 0;
}
