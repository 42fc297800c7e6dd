/* The trace format's names, made from trace_format.def (its one list of
 * events, members and fields; TRACE_FORMAT.md explains them):
 *
 *   GP_TRACE_FORMAT      gpuprof.meta's args.format
 *   GP_EV_<EVENT>        an event's name ("" where it varies), e.g.
 *                        GP_EV_ALLOC "alloc"; GP_PH_<EVENT> its ph,
 *                        GP_S_<EVENT> its scope (0: none)
 *   GP_CAT_<CAT>         a category, e.g. GP_CAT_MEMORY "memory"
 *   GP_KIND_<KIND>       a memory kind, e.g. GP_KIND_PINNED_HOST "pinned_host"
 *   GP_T_<MEMBER>        a top-level member's key, e.g. GP_T_TS "ts"
 *   GP_F_<FIELD>         an args field's key, e.g. GP_F_ADDR "addr"
 *
 * The writers pass these to gp_tw_* (trace_writer.h), so that a name is
 * spelled once. Static arrays, not macros: the X-macro cannot define
 * macros, and the compiler folds them as it folds literals.
 *
 * Readers and tests that need more (types, which fields an event holds)
 * define the seven GP_* macros themselves and include trace_format.def: see
 * exporters/trace_scan.h (its key tables) and tests/recorder/test_trace_format.c. */
#ifndef GPUPROF_TRACE_FORMAT_H
#define GPUPROF_TRACE_FORMAT_H

#include <stdint.h>

/* Expands an entry's tokens only for members gpuprof analyze reads (READ
 * AN); readers build their tables with it. */
#define GP_FMT_IF_AN(...) __VA_ARGS__
#define GP_FMT_IF_NO(...)

enum { GP_TRACE_FORMAT_ = 0
#define GP_FORMAT(version, meaning) , GP_TRACE_FORMAT = (version)
#define GP_CAT(id, name, meaning)
#define GP_KIND(id, name, meaning)
#define GP_EVENT(id, name, ph, scope, cat, meaning) , GP_PH_##id = (ph), GP_S_##id = (scope)
#define GP_TOP(id, key, read, type, unit, meaning)
#define GP_FIELD(id, key, read)
#define GP_ARG(event, field, type, unit, when, meaning)
#include "trace_format.def"
#include "trace_format_undef.h"
};

/* Device d of process P draws on the track with pid GP_GPU_PID_BASE +
 * P * GP_GPU_PID_STRIDE + d (TRACE_FORMAT.md). */
#define GP_GPU_PID_BASE 1000000000ll
#define GP_GPU_PID_STRIDE 100

static inline int64_t gp_gpu_pid(int64_t host_pid, uint32_t device)
{
	return GP_GPU_PID_BASE + host_pid * GP_GPU_PID_STRIDE + (device % GP_GPU_PID_STRIDE);
}

/* The device whose track pid is, in process host_pid's trace: 0, or -1
 * when pid is not one of that process's GPU tracks (untrusted numbers:
 * no overflow). */
static inline int gp_gpu_pid_device(int64_t pid, int64_t host_pid, int64_t *device)
{
	int64_t base;

	if (__builtin_mul_overflow(host_pid, GP_GPU_PID_STRIDE, &base) ||
	    __builtin_add_overflow(base, GP_GPU_PID_BASE, &base) ||
	    __builtin_sub_overflow(pid, base, device) || *device < 0 ||
	    *device >= GP_GPU_PID_STRIDE)
		return -1;
	return 0;
}

#define GP_FORMAT(version, meaning)
#define GP_CAT(id, name, meaning) static const char GP_CAT_##id[] = name;
#define GP_KIND(id, name, meaning) static const char GP_KIND_##id[] = name;
#define GP_EVENT(id, name, ph, scope, cat, meaning) static const char GP_EV_##id[] = name;
#define GP_TOP(id, key, read, type, unit, meaning) static const char GP_T_##id[] = key;
#define GP_FIELD(id, key, read) static const char GP_F_##id[] = key;
#define GP_ARG(event, field, type, unit, when, meaning)
#include "trace_format.def"
#include "trace_format_undef.h"

/* The name of the first event of gpuprof merge's output (viewer/merge/): a
 * Perfetto trace of many processes, not a trace of this format. Readers
 * that meet it say so, and what to read instead, in these words. */
#define GP_MERGE_EVENT "gpuprof.merge"
#define GP_MERGE_NOT_A_TRACE                                                  \
	"made by gpuprof merge (every process in one file, for Perfetto), not a " \
	"trace: give the run directory or the traces that were merged instead"

#endif
