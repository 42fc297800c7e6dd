/* The events an analysis consumes, in time order, once a trace line has been
 * read, checked and decoded (source.c). Everything else in a trace (kernels
 * other than collectives', copies, flows, counters) is checked and dropped
 * there. */
#ifndef GPUPROF_AN_EVENT_H
#define GPUPROF_AN_EVENT_H

#include <stdint.h>

#include "strtab.h"

enum an_ev_type {
	AE_ALLOC = 1, /* a addr, b bytes, c corr, d pool, e pool size */
	AE_FREE,      /* same */
	AE_POOL,      /* d pool, e its size (0: destroyed) */
	AE_OOM,       /* b bytes requested, c free, d total, e result; name = API */
	AE_PUSH,      /* NVTX push (B), name */
	AE_POP,       /* NVTX pop (E) */
	AE_START,     /* NVTX start (b), a id, name */
	AE_END,       /* NVTX end (e), a id */
	AE_MARK,      /* NVTX mark (i), name */
	AE_HISTORY,   /* a point of PyTorch's allocator history (history.h): a allocated, b reserved */
	/* PyTorch's caching allocator as gpuprof's hook saw it (torch.* events):
	 * its blocks are AE_ALLOC/AE_FREE with EVF_TORCH (c requested, d
	 * stack id); its OOM is AE_OOM with EVF_TORCH (b what it tried to
	 * cudaMalloc, a the block, c free, d allocated, e reserved) */
	AE_SEGMENT,   /* a addr, b bytes; EVF_RELEASE: given back; EVF_MAPPED: expandable pages */
	AE_ATTACH,    /* the hook began: a allocated, b reserved then; EVF_STACKS */
	/* a collective's kernel (collective.h): ts its start, a its duration
	 * (ns), c the stream, d the launch's corr; name the kernel */
	AE_COLL,
};

/* Memory kinds of the format, in its order. */
enum an_kind {
	K_DEVICE, K_ARRAY, K_DEVICE_STATIC, K_MANAGED, K_MANAGED_STATIC, K_PINNED_HOST,
	K_PAGEABLE, K_UNKNOWN, K_N
};
extern const char *const an_kind_names[K_N];

enum {
	EVF_ASYNC = 1,      /* stream-ordered (cudaMallocAsync) */
	EVF_POOL_SIZE = 2,  /* e holds the size of local pool d */
	EVF_MEMINFO = 4,    /* oom: free and total are known */
	EVF_THREAD = 8,     /* alloc/free: tid is the calling thread, name its API */
	EVF_TORCH = 16,     /* alloc/free/oom: PyTorch's caching allocator, from its hook */
	EVF_RELEASE = 32,   /* segment: given back */
	EVF_MAPPED = 64,    /* segment: pages of an expandable segment */
	EVF_STACKS = 128,   /* attach: blocks name their Python stacks */
};

struct an_ev {
	uint8_t type;
	uint8_t kind;
	uint8_t flags;
	uint32_t device;
	int64_t ts;  /* nanoseconds from the trace's ts_base_ns */
	int64_t tid; /* host thread, for NVTX and oom */
	uint64_t a, b, c, d, e;
	uint64_t f;  /* EVF_TORCH oom: PyTorch's allocated bytes then;
		      * alloc: the calling library (an_source's libraries) + 1 */
	struct an_str *name; /* a reference, or NULL */
};

/* Largest byte count taken as real: 1 PiB; more is absurd input. */
#define AN_MAX_BYTES (1ull << 50)
#define AN_MAX_DEVICES 64
#define AN_MAX_LIBRARIES 255 /* distinct calling libraries named; more go unnamed */

#endif
