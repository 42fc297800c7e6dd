/* The layer tree as people read it: siblings in order, and runs of alike
 * siblings (a ModuleList's twelve identical blocks) read as one row. The
 * rule is written down in CATEGORIES.md ("The layer tree"). */
#ifndef GPUPROF_AN_LAYERS_H
#define GPUPROF_AN_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"

/* Two siblings are alike when their bytes differ by at most 1/AN_ALIKE_PART
 * of the larger, and so do those of every pair of their descendants of the
 * same name (their subtrees have the same names). */
#define AN_ALIKE_PART 100

/* strcmp, but a run of digits against a run of digits compares as numbers:
 * "h.2" before "h.11". */
int an_layer_name_cmp(const char *a, const char *b);

/* Orders the siblings v[0..n) (each one's children already ordered) and
 * marks the runs of alike numbered siblings (names that are decimal
 * numbers: a ModuleList's or Sequential's entries): a run's members come
 * together, by number, the first with `alike` filled; rows (a run, or a
 * sibling in none) largest first, a run by its total, ties by name. whole:
 * what shares are of. -ENOMEM: v unchanged, or (a label not made) in
 * order. */
int an_layers_order(struct gp_an_result *r, struct gp_an_node *v, size_t n, uint64_t whole);

#endif
