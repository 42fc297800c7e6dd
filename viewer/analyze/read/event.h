/* The events an analysis consumes, in time order, once a trace line has been
 * read, checked and decoded (source.c). Everything else in a trace (kernels
 * other than collectives', copies, flows, counters) is checked and dropped
 * there. */
#ifndef GPUPROF_AN_EVENT_H
#define GPUPROF_AN_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

enum an_ev_type {
	AE_ALLOC = 1, /* mem */
	AE_FREE,      /* mem */
	AE_POOL,      /* pool */
	AE_OOM,       /* oom; name = API */
	AE_PUSH,      /* NVTX push (B), name */
	AE_POP,       /* NVTX pop (E) */
	AE_START,     /* NVTX start (b): range, name */
	AE_END,       /* NVTX end (e): range */
	AE_MARK,      /* NVTX mark (i), name */
	AE_HISTORY,   /* a point of PyTorch's allocator history (history.h): history */
	/* PyTorch's caching allocator as gpuprof's hook saw it (torch.* events):
	 * its blocks are AE_ALLOC/AE_FREE with EVF_TORCH, its OOM is AE_OOM
	 * with EVF_TORCH */
	AE_SEGMENT,   /* segment; EVF_RELEASE: given back; EVF_MAPPED: expandable pages */
	AE_ATTACH,    /* attach: the hook began; EVF_STACKS */
	AE_COLL,      /* coll: a collective's kernel (collective.h); ts its start, name the kernel */
};

/* Memory kinds of the format, in its order. */
enum an_kind {
	K_DEVICE, K_ARRAY, K_DEVICE_STATIC, K_MANAGED, K_MANAGED_STATIC, K_PINNED_HOST,
	K_PAGEABLE, K_UNKNOWN, K_N
};
extern const char *const an_kind_names[K_N];

enum {
	EVF_ASYNC = 1,      /* stream-ordered (cudaMallocAsync) */
	EVF_POOL_SIZE = 2,  /* alloc/free: mem.pool and mem.pool_size are known */
	EVF_MEMINFO = 4,    /* oom: free and total are known */
	EVF_THREAD = 8,     /* alloc/free: tid is the calling thread, name its API */
	EVF_TORCH = 16,     /* alloc/free/oom: PyTorch's caching allocator, from its hook */
	EVF_RELEASE = 32,   /* segment: given back */
	EVF_MAPPED = 64,    /* segment: pages of an expandable segment */
	EVF_STACKS = 128,   /* attach: blocks name their Python stacks */
	/* alloc: a CUDA allocation at the address of a PyTorch segment whose
	 * torch.segment_alloc the source had read and not yet handed out when
	 * this left the reorder window: by all signs that segment's cudaMalloc
	 * (source.c; the model checks it, analyze.c) */
	EVF_SEG_CUDA = 256,
};

/* AE_ALLOC, AE_FREE: a block of memory, CUDA's or (EVF_TORCH) PyTorch's. */
struct an_ev_mem {
	uint64_t addr;
	uint64_t bytes; /* its size; a PyTorch free may leave it 0 */
	union {
		uint64_t corr;      /* CUDA: its API call's correlation id, 0 if none */
		uint64_t requested; /* EVF_TORCH: the bytes the program asked for */
	};
	union {
		uint64_t pool;  /* EVF_POOL_SIZE: the stream-ordered pool it is in */
		uint64_t stack; /* EVF_TORCH alloc: its Python stack's id, 0 if none */
	};
	uint64_t pool_size; /* EVF_POOL_SIZE: that pool's size then */
	uint64_t library;   /* alloc: the calling library (an_source's libraries) + 1, 0 if none */
};

/* AE_POOL: a stream-ordered pool's size changed. */
struct an_ev_pool {
	uint64_t pool;
	uint64_t size; /* 0: destroyed */
};

/* AE_OOM: a failed allocation, CUDA's or (EVF_TORCH) PyTorch's. */
struct an_ev_oom {
	uint64_t requested; /* bytes the call asked for (EVF_TORCH: the cudaMalloc PyTorch tried) */
	uint64_t free;      /* EVF_MEMINFO: the device's free bytes then */
	uint64_t total;     /* EVF_MEMINFO: the device's size */
	union {
		int64_t result; /* CUDA: the call's error code */
		struct {
			uint64_t block;     /* the block the program asked for (bytes) */
			uint64_t allocated; /* PyTorch's allocated bytes then */
			uint64_t reserved;  /* PyTorch's reserved bytes then */
		} torch; /* EVF_TORCH */
	};
};

/* AE_SEGMENT: one of PyTorch's segments made or given back. */
struct an_ev_segment {
	uint64_t addr;
	uint64_t bytes;
};

/* AE_ATTACH, AE_HISTORY: PyTorch's own counts at that moment. */
struct an_ev_torch_usage {
	uint64_t allocated;
	uint64_t reserved;
};

/* AE_COLL: a collective's kernel. */
struct an_ev_coll {
	int64_t duration; /* ns */
	int64_t stream;
	uint64_t corr;    /* its launch's correlation id */
};

/* AE_START, AE_END: an NVTX start/end range. */
struct an_ev_range {
	uint64_t id;
};

struct an_ev {
	uint8_t type;  /* enum an_ev_type: which member of the union below it fills */
	uint8_t kind;  /* alloc/free: enum an_kind */
	uint16_t flags; /* EVF_* */
	uint32_t device;
	int64_t ts;  /* nanoseconds from the trace's ts_base_ns */
	int64_t tid; /* host thread: NVTX, oom; alloc/free with EVF_THREAD */
	struct an_str *name; /* a reference, or NULL */
	union {
		struct an_ev_mem mem;
		struct an_ev_pool pool;
		struct an_ev_oom oom;
		struct an_ev_segment segment;
		struct an_ev_torch_usage attach;
		struct an_ev_torch_usage history;
		struct an_ev_coll coll;
		struct an_ev_range range;
	};
};

/* The reorder window holds many: named members must not make it larger
 * than the six generic ones they replace. An initializer that names no
 * member of the union zeroes its first, mem: the largest, so all of it. */
_Static_assert(sizeof(struct an_ev) <= 80, "struct an_ev grew");
_Static_assert(sizeof(struct an_ev_mem) == sizeof(struct an_ev) - offsetof(struct an_ev, mem),
	       "mem is the union's largest member");

/* Largest byte count taken as real: 1 PiB; more is absurd input. */
#define AN_MAX_BYTES (1ull << 50)
#define AN_MAX_DEVICES 64
#define AN_MAX_LIBRARIES 255 /* distinct calling libraries named; more go unnamed */

/* An event of gpuprof's hook on PyTorch's caching allocator that says the
 * hook ran in its process: the attach, a segment, a block made (a free or
 * an OOM of PyTorch's alone does not). The source looks for it ahead, the
 * analysis counts it (an_proc.saw_blocks). */
static inline int an_ev_from_hook(const struct an_ev *ev)
{
	return ev->type == AE_ATTACH || ev->type == AE_SEGMENT ||
	       (ev->type == AE_ALLOC && (ev->flags & EVF_TORCH));
}

#endif
