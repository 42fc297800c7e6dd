/* What the recorder can record, part by part (GPUPROF_RECORD's names,
 * config.c): memory allocations are always recorded, the rest can be left
 * out to measure what each costs or to make the trace smaller. */
#ifndef GPUPROF_PARTS_H
#define GPUPROF_PARTS_H

enum {
	GP_REC_KERNELS = 1 << 0, /* kernel activity */
	GP_REC_COPIES = 1 << 1,  /* memcpy and memset activity */
	GP_REC_API = 1 << 2,     /* the selected runtime/driver API calls */
	GP_REC_OOM = 1 << 3,     /* API-exit callbacks for failed allocations */
	GP_REC_NVTX = 1 << 4,    /* gpuprof as the NVTX tool */
	GP_REC_LAUNCHES = 1 << 5, /* API records of kernel launches (with "api") */
	GP_REC_POOLS = 1 << 7,   /* memory pool records (creation, trim, destruction) */
	/* module globals (__device__ variables: CUPTI's DEVICE_STATIC memory
	 * records). While the callbacks record allocations (gp_rec_by_callbacks)
	 * they are all that CUPTI's memory records add, and those records cost
	 * every allocation and free ~0.55 µs (bench/op_cost, bench/RESULTS.md):
	 * without this part they are off. Otherwise they come with the memory
	 * records. */
	GP_REC_STATICS = 1 << 8,
	GP_REC_ALL = 0x3f | GP_REC_POOLS | GP_REC_STATICS,
	/* Only gpuprof_bench_record() turns memory records off; GPUPROF_RECORD
	 * always has them. */
	GP_REC_MEMORY = 1 << 6,
};

/* Whether parts have gpuprof's API callbacks record allocations and frees:
 * memory without CUPTI's pool records (api_callbacks.c says why). */
static inline int gp_rec_by_callbacks(unsigned parts)
{
	return (parts & GP_REC_MEMORY) && !(parts & GP_REC_POOLS);
}
/* Whether parts have CUPTI's memory records (MEMORY2) on: they are the
 * allocations unless the callbacks record those; beside the callbacks they
 * add only module globals, so then only with GP_REC_STATICS. */
static inline int gp_rec_memory_records(unsigned parts)
{
	return (parts & GP_REC_MEMORY) && (!gp_rec_by_callbacks(parts) || (parts & GP_REC_STATICS));
}

#endif
