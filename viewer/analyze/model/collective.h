/* Collective calls (NCCL's kernels) around the moments an analysis reports:
 * a device's peak and its failed allocations.
 *
 * A collective is "at" a moment when it was outstanding then: launched
 * before it (the launch call's end, from its corr; the kernel's start when
 * the call is not in the trace) and not yet finished (the kernel's end after
 * it). That is when its buffers are live and when a rank waits on its peers.
 * Events come in time order of the kernels' starts, so a collective launched
 * before a moment may come after it (the GPU runs behind the host): each
 * moment keeps watching later kernels for those, and for the first one
 * launched after it. Where none is outstanding, the last one that ended
 * before the moment says what the rank had just done.
 *
 * A kernel's collective is named by NCCL's range of the call that launched
 * it (the launch call's thread and time inside the range), else by the
 * kernel's own name.
 *
 * Memory is bounded: per device, the kernels still running (AN_COLL_OPEN);
 * per moment, AN_COLL_MAX outstanding ones (the rest counted); per process,
 * the last AN_COLL_CALLS calls. */
#ifndef GPUPROF_AN_COLLECTIVE_H
#define GPUPROF_AN_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "coll_kernel.h"
#include "event.h"
#include "exporters/trace_scan.h"
#include "strtab.h"

#define AN_COLL_MAX 8    /* outstanding collectives kept per moment */
#define AN_COLL_OPEN 64  /* kernels running at once, per device, that are followed */
#define AN_COLL_CALLS 64 /* NCCL calls kept per process to name the kernels they launch */

struct an_coll {
	struct an_str *kernel; /* reference: the kernel's name up to its arguments */
	struct an_str *call;   /* reference: NCCL's range of the call that launched
				* it ("ncclAllGather"); NULL: not in the trace */
	int64_t launch, start, end; /* absolute ns */
	int64_t stream;        /* CUPTI's stream id */
	int64_t tid;           /* the launching thread; 0: not known */
	int launch_known;      /* launch is the call's; else it is the kernel's start */
};

struct an_coll_moment {
	int set;               /* a moment was taken */
	int64_t ts;            /* absolute ns */
	struct an_coll during[AN_COLL_MAX]; /* outstanding, by launch */
	size_t n;
	uint32_t more;         /* outstanding past AN_COLL_MAX */
	int has_before, has_after;
	struct an_coll before; /* the last to end before it (none outstanding or not) */
	struct an_coll after;  /* the first launched after it */
};

struct an_coll_dev {
	struct an_coll open[AN_COLL_OPEN]; /* started, not ended at the newest start */
	size_t nopen;
	int has_last;
	struct an_coll last;   /* the latest end among those that left open[] */
	uint64_t count;        /* collectives seen on the device */
};

/* NCCL's own NVTX ranges (domain NCCL, on unless NCCL_NVTX_DISABLE=1) of
 * its collective calls: their names say the collective where the kernel's
 * does not (NCCL runs many through ncclDevKernel_Generic). The newest
 * AN_COLL_CALLS of a process, oldest replaced first. */
struct an_coll_call {
	struct an_str *name;   /* reference; NULL: an empty slot */
	int64_t tid, start, end; /* absolute ns; end 0: still open */
};

struct an_coll_calls {
	struct an_coll_call v[AN_COLL_CALLS];
	size_t next;
};

struct an_analysis;
struct an_pd;
struct an_proc;

/* Whether an NVTX range is NCCL's of a collective call ("ncclAllReduce";
 * not "ncclCommInitRank" nor "ncclGroupEnd"). */
int an_coll_is_call(const struct an_str *name);
/* The call's range opened (closed) on thread tid at ts. */
void an_coll_call_push(struct an_analysis *a, struct an_proc *p, int64_t tid, int64_t ts,
		       struct an_str *name);
void an_coll_call_pop(struct an_proc *p, int64_t tid, const struct an_str *name, int64_t ts);
void an_coll_calls_free(struct an_analysis *a, struct an_coll_calls *c);

/* An AE_COLL event of pd's device, ts its kernel's absolute start. */
void an_coll_event(struct an_analysis *a, struct an_pd *pd, const struct an_ev *ev, int64_t ts);
/* Takes the moment ts of pd into m (whatever m held is let go). */
void an_coll_take(struct an_analysis *a, struct an_pd *pd, struct an_coll_moment *m, int64_t ts);
void an_coll_moment_free(struct an_analysis *a, struct an_coll_moment *m);
void an_coll_dev_free(struct an_analysis *a, struct an_coll_dev *d);

#endif
