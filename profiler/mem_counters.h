/* Live-memory counters computed in timestamp order.
 *
 * CUPTI hands memory records over in per-thread buffers, so they arrive out of
 * time order; a running sum in arrival order was measured wrong by 3x. Records
 * are pushed as they arrive and held in a min-heap; gp_memc_advance(w) applies,
 * in (ts, arrival) order, every record older than the watermark w, after which
 * the caller promises no record older than w will come. One that still does is
 * "late": it is applied at the last watermark and counted.
 *
 * Memory: the heap holds the records of one watermark interval (bounded by
 * max_pending, past which the oldest are applied early), and the live map holds
 * one entry per live allocation. Nothing grows with the length of the run.
 * No CUPTI here: the unit tests drive it directly. Not thread-safe. */
#ifndef GPUPROF_MEM_COUNTERS_H
#define GPUPROF_MEM_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

enum gp_mem_counter {
	GP_MC_DEVICE,
	GP_MC_DEVICE_STATIC,
	GP_MC_MANAGED,
	GP_MC_PINNED_HOST,
	GP_MC_POOL_RESERVED,
	GP_MC_COUNT,
	GP_MC_NONE = 255, /* a kind no counter tracks (pageable, unknown) */
};

/* Names of the counter args, as in TRACE_FORMAT.md. */
extern const char *const gp_mc_names[GP_MC_COUNT];

enum gp_mem_op_type { GP_MEMOP_ALLOC = 1, GP_MEMOP_FREE = 2, GP_MEMOP_POOL_SIZE = 3 };

struct gp_mem_op {
	uint64_t ts;      /* ns, any monotonic base */
	uint64_t addr;    /* allocation address, or pool address for POOL_SIZE */
	uint64_t bytes;   /* allocation size, or the pool's new size */
	uint32_t device;
	uint8_t type;     /* enum gp_mem_op_type */
	uint8_t counter;  /* enum gp_mem_counter of the allocation */
};

struct gp_memc_stats {
	uint64_t applied;
	uint64_t late;            /* older than a watermark already passed */
	uint64_t forced;          /* applied before their watermark: heap was full */
	uint64_t unmatched_frees; /* free of an address not live */
	uint64_t double_allocs;   /* alloc of an address already live */
	uint64_t live_allocs;     /* now */
};

/* Called once per (device, ts) group after its records were applied, with the
 * device's totals indexed by enum gp_mem_counter. */
typedef void (*gp_memc_emit_fn)(void *ctx, uint32_t device, uint64_t ts,
				const uint64_t totals[GP_MC_COUNT]);

struct gp_mem_counters;

/* max_pending: heap capacity in records (0 = default 1M). 0 or -ENOMEM. */
int gp_memc_create(struct gp_mem_counters **out, size_t max_pending);
void gp_memc_destroy(struct gp_mem_counters *c);
/* May apply (and emit) the oldest records if the heap is full. 0 or -ENOMEM
 * (the record is then counted nowhere: the caller counts it as dropped). */
int gp_memc_push(struct gp_mem_counters *c, const struct gp_mem_op *op,
		 gp_memc_emit_fn emit, void *ctx);
/* Applies every pending record with ts < watermark (UINT64_MAX: all). */
void gp_memc_advance(struct gp_mem_counters *c, uint64_t watermark,
		     gp_memc_emit_fn emit, void *ctx);
void gp_memc_get_stats(const struct gp_mem_counters *c, struct gp_memc_stats *st);
/* Current totals of one device (zeros for a device never seen). */
void gp_memc_totals(const struct gp_mem_counters *c, uint32_t device,
		    uint64_t totals[GP_MC_COUNT]);

#endif
