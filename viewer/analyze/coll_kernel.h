/* NCCL's kernels by their names: which kernels are collectives', and a
 * kernel's name without its arguments. The trace's reader (parse.c,
 * source.c) keeps those kernels by it; the analysis of collectives
 * (collective.h) sits above both and names its calls by the same prefix. */
#ifndef GPUPROF_AN_COLL_KERNEL_H
#define GPUPROF_AN_COLL_KERNEL_H

#include <stddef.h>

/* The kernel-name prefix that makes a kernel a collective (NCCL's). */
#define AN_COLL_PREFIX "nccl"

/* Whether a kernel name is a collective's (n: its length). */
int an_coll_is_kernel(const char *name, size_t n);
/* The length of a kernel name without its argument list ("(...)"). */
size_t an_coll_kernel_len(const char *name, size_t n);

#endif
