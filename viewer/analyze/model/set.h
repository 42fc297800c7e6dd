/* The allocations alive at one moment (a peak, a failed allocation, a
 * leak's survivors) with what each is, and bytes grouped by a name: what
 * the result's groupings (build.c) and the advice (advice.c) are made of. */
#ifndef GPUPROF_AN_SET_H
#define GPUPROF_AN_SET_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/u64_map.h"
#include "state.h"

/* Bytes and allocations under one name. */
struct an_grp {
	const char *name; /* borrowed: an interned string or a literal */
	uint64_t bytes, count;
};

/* Groups by a key (an interned string's address, a phase...). */
struct an_grpset {
	struct gp_u64map by_key; /* key -> struct an_grp */
	struct an_grp **list;
	size_t n, cap;
	int oom;
};

void an_grp_add(struct an_grpset *g, uint64_t key, const char *name, uint64_t bytes);
/* Largest first, then by name. */
void an_grp_sort(struct an_grpset *g);
void an_grp_free(struct an_grpset *g);

struct an_member {
	struct an_rec *r;      /* borrowed from the snapshot */
	int cat;               /* enum an_cat (torch modes) */
	struct an_str *label;  /* CAT_OTHER: what it is (a reference) */
};

struct an_set {
	struct an_member *m;
	size_t n;
	uint64_t bytes;
	uint64_t cat_bytes[CAT_N];
	int torch; /* a torch mode: categories known */
	int steps; /* the process marked steps */
};

/* The set of recs (borrowed) of process p, classified. 0 or -ENOMEM. */
int an_set_make(struct an_analysis *a, const struct an_proc *p, struct an_rec **recs, size_t n,
		struct an_set *s);
void an_set_free(struct an_analysis *a, struct an_set *s);

#endif
