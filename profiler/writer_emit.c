/* The events more than one decoder writes (writer_ctx.h): a device's GPU
 * process and record, a stream's and a host thread's name, an allocation or
 * free and the memory counters it moves. Runs on the writer thread only;
 * below the decoders, which call it, and calls none of them. */
#include "writer_ctx.h"

#include <cupti.h>
#include <stdio.h>
#include <string.h>

int64_t gp_stream_tid(uint32_t stream)
{
	return stream == CUPTI_INVALID_STREAM_ID ? 0 : (int64_t)stream;
}

void gp_emit_counter(void *p, uint32_t device, uint64_t ts, const uint64_t totals[GP_MC_COUNT])
{
	struct gp_writer_ctx *w = p;
	gp_tw_begin(w->tw, GP_PH_GPU_MEMORY, GP_EV_GPU_MEMORY, GP_CAT_MEMORY, gp_gpu_pid(w->host_pid, device), 0,
		    gp_rel_ts(ts));
	gp_tw_args_begin(w->tw);
	for (int i = 0; i < GP_MC_COUNT; i++)
		gp_tw_arg_u64(w->tw, gp_mc_names[i], totals[i]);
	gp_tw_end(w->tw);
}

/* The device's record (gpuprof.device), once the device is used and known. */
static void write_device(struct gp_writer_ctx *w, uint32_t device)
{
	const struct gp_device_info *info = &w->dev[device];
	int64_t gpid = gp_gpu_pid(w->host_pid, device);
	char cc[24];

	gp_tw_begin(w->tw, GP_PH_DEVICE, GP_EV_DEVICE, GP_CAT_GPUPROF, gpid, 0, 0);
	gp_tw_field_str(w->tw, GP_T_S, "g");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, device);
	gp_tw_arg_str(w->tw, GP_F_NAME, info->name);
	gp_tw_arg_u64(w->tw, GP_F_TOTAL_MEMORY, info->total_memory);
	gp_tw_arg_str(w->tw, GP_F_UUID, info->uuid);
	snprintf(cc, sizeof(cc), "%u.%u", info->cc_major, info->cc_minor);
	gp_tw_arg_str(w->tw, GP_F_CC, cc);
	gp_tw_arg_i64(w->tw, GP_F_GPU_PID, gpid);
	gp_tw_end(w->tw);
}

/* The first event of a device this process uses: its GPU's process named
 * and its record written. CUPTI describes every device of the host at the
 * start; a device the process never uses gets nothing in its trace. */
void gp_note_device(struct gp_writer_ctx *w, uint32_t device)
{
	if (device >= GP_MAX_DEVICES || (w->dev_counted >> device) & 1)
		return;
	w->dev_counted |= 1ULL << device;
	/* The GPU's process needs a name even before its device record comes. */
	char name[200];
	const struct gp_device_info *d = &w->dev[device];
	snprintf(name, sizeof(name), "GPU %u: %s (pid %lld)", device,
		 d->seen ? d->name : "CUDA device", (long long)w->host_pid);
	int64_t gpid = gp_gpu_pid(w->host_pid, device);
	gp_tw_begin(w->tw, GP_PH_PROCESS_NAME, GP_EV_PROCESS_NAME, GP_CAT_NONE, gpid, 0, 0);
	gp_tw_args_begin(w->tw);
	gp_tw_arg_str(w->tw, GP_F_NAME, name);
	gp_tw_end(w->tw);
	gp_tw_begin(w->tw, GP_PH_PROCESS_SORT_INDEX, GP_EV_PROCESS_SORT_INDEX, GP_CAT_NONE, gpid, 0, 0);
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_SORT_INDEX, 100 + device);
	gp_tw_end(w->tw);
	gp_tw_begin(w->tw, GP_PH_THREAD_NAME, GP_EV_THREAD_NAME, GP_CAT_NONE, gpid, 0, 0);
	gp_tw_args_begin(w->tw);
	gp_tw_arg_str(w->tw, GP_F_NAME, "memory (no stream)");
	gp_tw_end(w->tw);
	if (d->seen)
		write_device(w, device);
}

void gp_name_stream(struct gp_writer_ctx *w, uint32_t device, uint32_t stream)
{
	if (stream == CUPTI_INVALID_STREAM_ID)
		return;
	uint64_t key = ((uint64_t)(device + 1) << 32) | stream;
	if (gp_u64set_add(&w->streams, key) != 1)
		return;
	char name[48];
	snprintf(name, sizeof(name), "stream %u", stream);
	gp_tw_begin(w->tw, GP_PH_THREAD_NAME, GP_EV_THREAD_NAME, GP_CAT_NONE, gp_gpu_pid(w->host_pid, device), stream, 0);
	gp_tw_args_begin(w->tw);
	gp_tw_arg_str(w->tw, GP_F_NAME, name);
	gp_tw_end(w->tw);
}

void gp_name_host_thread(struct gp_writer_ctx *w, uint32_t tid)
{
	if (!tid || gp_u64set_add(&w->threads, tid) != 1)
		return;
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
	}
	char name[96];
	if (tid == (uint32_t)w->host_pid)
		snprintf(name, sizeof(name), "%s (main thread %u)", comm[0] ? comm : "thread", tid);
	else
		snprintf(name, sizeof(name), "%s (thread %u)", comm[0] ? comm : "thread", tid);
	gp_tw_begin(w->tw, GP_PH_THREAD_NAME, GP_EV_THREAD_NAME, GP_CAT_NONE, w->host_pid, tid, 0);
	gp_tw_args_begin(w->tw);
	gp_tw_arg_str(w->tw, GP_F_NAME, name);
	gp_tw_end(w->tw);
}

/* One alloc or free event and its counter update, from a CUPTI memory record
 * or from the API callbacks' host events (host_decode.c). */
void gp_emit_memory(struct gp_writer_ctx *w, const struct gp_memory_ev *m)
{
	int64_t gpid = gp_gpu_pid(w->host_pid, m->device);
	gp_note_device(w, m->device);
	gp_name_stream(w, m->device, m->stream);
	gp_tw_begin(w->tw, GP_PH_ALLOC, m->alloc ? GP_EV_ALLOC : GP_EV_FREE, GP_CAT_MEMORY, gpid,
		    gp_stream_tid(m->stream), gp_rel_ts(m->ts));
	gp_tw_field_str(w->tw, GP_T_S, "t");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_hex(w->tw, GP_F_ADDR, m->addr);
	gp_tw_arg_u64(w->tw, GP_F_BYTES, m->bytes);
	gp_tw_arg_str(w->tw, GP_F_KIND, m->kind);
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, m->device);
	gp_tw_arg_i64(w->tw, GP_F_STREAM, m->stream == CUPTI_INVALID_STREAM_ID ? -1 : (int64_t)m->stream);
	gp_tw_arg_u64(w->tw, GP_F_CORR, m->corr);
	gp_tw_arg_bool(w->tw, GP_F_ASYNC, m->async);
	if (m->thread)
		gp_tw_arg_u64(w->tw, GP_F_THREAD, m->thread);
	if (m->api)
		gp_tw_arg_str(w->tw, GP_F_API, m->api);
	const char *caller = m->caller;
	if (!caller && m->alloc && m->corr && w->callers.count)
		caller = gp_u64map_del(&w->callers, m->corr);
	if (caller)
		gp_tw_arg_str(w->tw, GP_F_CALLER, caller);
	if (m->pool) {
		gp_tw_arg_hex(w->tw, GP_F_POOL, m->pool_addr);
		gp_tw_arg_str(w->tw, GP_F_POOL_TYPE, m->pool == GP_POOL_LOCAL ? "local" : "imported");
		if (m->pool == GP_POOL_LOCAL) {
			gp_tw_arg_u64(w->tw, GP_F_POOL_SIZE, m->pool_size);
			gp_tw_arg_u64(w->tw, GP_F_POOL_USED, m->pool_used);
		}
	}
	gp_tw_end(w->tw);

	struct gp_mem_op op = {
		.ts = m->ts, .addr = m->addr, .bytes = m->bytes, .device = m->device,
		.type = m->alloc ? GP_MEMOP_ALLOC : GP_MEMOP_FREE, .counter = m->counter,
	};
	if (gp_memc_push(w->mc, &op, gp_emit_counter, w) != 0)
		atomic_fetch_add(&gp_rec.dropped_host, 1);
	if (m->pool == GP_POOL_LOCAL) {
		struct gp_mem_op pool = {
			.ts = m->ts, .addr = m->pool_addr, .bytes = m->pool_size, .device = m->device,
			.type = GP_MEMOP_POOL_SIZE, .counter = GP_MC_POOL_RESERVED,
		};
		if (gp_memc_push(w->mc, &pool, gp_emit_counter, w) != 0)
			atomic_fetch_add(&gp_rec.dropped_host, 1);
	}
}
