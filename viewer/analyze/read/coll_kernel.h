/* NCCL's kernels by their names: a kernel's name without its arguments.
 * Which kernels are collectives' (gp_tr_is_coll_kernel(), GP_TR_COLL_PREFIX) the
 * trace's scanner decides (exporters/trace_scan.h); the reader (source.c)
 * names the kernels it keeps by this, and the analysis of collectives
 * (collective.h) sits above both. */
#ifndef GPUPROF_AN_COLL_KERNEL_H
#define GPUPROF_AN_COLL_KERNEL_H

#include <stddef.h>

#include "exporters/trace_scan.h"

/* The length of a kernel name without its argument list ("(...)"). */
size_t an_coll_kernel_len(const char *name, size_t n);

#endif
