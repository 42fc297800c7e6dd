/* What gpuprof's PyTorch allocator hook hands the recorder: every block and
 * segment of PyTorch's caching allocator as it happens, and the Python stacks
 * that made them (native mode).
 *
 * The hook (profiler/python/gpuprof_alloc.cpp) is a library built against
 * the program's own torch; the recorder (libgpuprof_inject.so) is built with
 * gpuprof. This header is all they share: plain C, fixed-size fields, a
 * version. The hook is given the recorder's two entry points below as
 * function pointers (the PyTorch hooks find them with ctypes) and calls them
 * on the thread that allocates, inside PyTorch's allocator lock: they copy
 * and hand over (host_events.c), nothing more. */
#ifndef GPUPROF_TORCH_ALLOC_H
#define GPUPROF_TORCH_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever struct gp_ta_event changes: the recorder refuses events of
 * another version (a hook built by another gpuprof). */
#define GP_TA_VERSION 1

enum gp_ta_type {
	GP_TA_ALLOC = 1,     /* a block handed out */
	GP_TA_FREE,          /* a block given back by the program (PyTorch's FREE_REQUESTED) */
	GP_TA_SEGMENT_ALLOC, /* cudaMalloc of a segment */
	GP_TA_SEGMENT_FREE,  /* cudaFree of a segment */
	GP_TA_SEGMENT_MAP,   /* pages mapped into an expandable segment */
	GP_TA_SEGMENT_UNMAP, /* pages unmapped from one */
	GP_TA_OOM,           /* PyTorch gave up and raised OutOfMemoryError */
	GP_TA_ATTACH,        /* the hook started watching this device */
	GP_TA_TYPE_END
};

enum {
	/* ALLOC: the block's size could not be read from PyTorch's counters
	 * (they moved by something else than this block): bytes is the request
	 * rounded as PyTorch rounds it, a lower bound */
	GP_TA_F_SIZE_GUESSED = 1,
};

struct gp_ta_event {
	uint32_t version;   /* GP_TA_VERSION */
	uint16_t type;      /* enum gp_ta_type */
	uint16_t flags;     /* GP_TA_F_* */
	uint64_t ts;        /* CLOCK_REALTIME ns when it happened (the recorder's clock) */
	uint64_t addr;      /* block or segment address; OOM, ATTACH: 0 */
	/* ALLOC: the block's size, what torch.cuda.memory_allocated() counts;
	 * FREE: 0 (the recorder knows it from the ALLOC); SEGMENT_*: the
	 * segment's (or the mapped range's) bytes; OOM: what PyTorch tried to
	 * cudaMalloc, the size its error message names */
	uint64_t bytes;
	/* ALLOC, FREE: the bytes the program asked for; OOM: the block it
	 * needed (the request rounded) */
	uint64_t requested;
	uint64_t stream;    /* cudaStream_t, as a number; 0: the default stream */
	/* OOM, ATTACH: PyTorch's own counts at that moment
	 * (memory_allocated(), memory_reserved()); OOM: free device memory as
	 * CUDA reported it to PyTorch */
	uint64_t allocated, reserved, free;
	uint32_t stack;     /* ALLOC: the Python stack's id (gp_ta_stack), 0 none */
	uint32_t tid;       /* the kernel thread id of the thread it happened on */
	int32_t device;
	uint32_t reserved0; /* 0 */
};

/* The recorder's entry points (profiler/torch_alloc.c), exported from
 * libgpuprof_inject.so. Both return 0, or -errno when the event was not
 * taken (recorder off, queue full: counted in the trace, version). */
typedef int (*gp_ta_event_fn)(const struct gp_ta_event *ev);
/* A new Python stack: id > 0, never given twice; frames: innermost first,
 * each "file" US "line" US "function" RS (US = 0x1f, RS = 0x1e), len bytes,
 * no NUL needed. Stacks come before the events that name them. */
typedef int (*gp_ta_stack_fn)(uint32_t id, const char *frames, size_t len);

/* Nonzero when the calling thread is inside a module's forward range (the
 * hooks' NVTX "fwd:" push): there the module names a block, and without
 * --stacks its Python stack is not read. Any thread; never blocks. */
typedef int (*gp_ta_in_module_fn)(void);

#define GP_TA_US '\x1f'
#define GP_TA_RS '\x1e'

#endif
