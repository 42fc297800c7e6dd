/* NCCL's kernels by their names, see coll_kernel.h. */
#include "coll_kernel.h"

#include <string.h>

size_t an_coll_kernel_len(const char *name, size_t n)
{
	const char *paren = memchr(name, '(', n);

	return paren ? (size_t)(paren - name) : n;
}
