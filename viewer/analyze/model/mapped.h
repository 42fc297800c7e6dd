/* The pages PyTorch's expandable segments have mapped, as address ranges:
 * each contiguous run one segment in the report's picture of the cache
 * (mapped.c). */
#ifndef GPUPROF_AN_MAPPED_H
#define GPUPROF_AN_MAPPED_H

#include <stddef.h>
#include <stdint.h>

#include "moments.h" /* struct an_seg */

/* Sorted by address, none touching another. */
struct an_mapped {
	struct an_seg *v;
	size_t n, cap;
};

/* Pages mapped, and unmapped (the stretch may cover several ranges or
 * part of one, or pages not mapped); 0 or -ENOMEM. */
int an_mapped_add(struct an_mapped *m, uint64_t addr, uint64_t bytes);
int an_mapped_remove(struct an_mapped *m, uint64_t addr, uint64_t bytes);
void an_mapped_free(struct an_mapped *m);

#endif
