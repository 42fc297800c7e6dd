/* NCCL's kernels by their names, see coll_kernel.h. */
#include "coll_kernel.h"

#include <string.h>

int an_coll_is_kernel(const char *name, size_t n)
{
	size_t k = sizeof(AN_COLL_PREFIX) - 1;

	return n > k && memcmp(name, AN_COLL_PREFIX, k) == 0;
}

size_t an_coll_kernel_len(const char *name, size_t n)
{
	const char *paren = memchr(name, '(', n);

	return paren ? (size_t)(paren - name) : n;
}
