/* CUPTI activity records -> trace events (see exporters/TRACE_FORMAT.md).
 * Runs on the writer thread only. Records are checked before use: a record
 * with an impossible time range is counted and skipped, never trusted. */
#include "writer_ctx.h"

#include "api_callbacks.h"
#include "api_select.h"
#include "context_devices.h"
#include "parts.h"

#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *memory_kind_name(CUpti_ActivityMemoryKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return GP_KIND_PAGEABLE;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return GP_KIND_PINNED_HOST;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return GP_KIND_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return GP_KIND_ARRAY;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return GP_KIND_MANAGED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return GP_KIND_DEVICE_STATIC;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return GP_KIND_MANAGED_STATIC;
	default: return GP_KIND_UNKNOWN;
	}
}

static uint8_t memory_kind_counter(CUpti_ActivityMemoryKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return GP_MC_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return GP_MC_DEVICE_STATIC;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return GP_MC_MANAGED;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return GP_MC_PINNED_HOST;
	default: return GP_MC_NONE;
	}
}

static const char *memcpy_name(uint8_t kind)
{
	static const char *const names[] = {
		"memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH",
		"memcpy AtoA", "memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH",
		"memcpy PtoP",
	};
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "memcpy";
}

/* ---- names ---- */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static demangle_fn demangle;
static int demangle_looked_up;

/* The kernel's readable name; CUPTI's name pointer is shared by all records
 * of one function, so the demangled form is cached by pointer. */
static const char *kernel_name(struct gp_writer_ctx *w, const char *mangled)
{
	if (!mangled)
		return "kernel";
	const char *cached = gp_strmap_get(&w->kernels, (uint64_t)(uintptr_t)mangled);
	if (cached)
		return cached;
	if (!demangle_looked_up) {
		demangle_looked_up = 1;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
		demangle = (demangle_fn)dlsym(h ? h : RTLD_DEFAULT, "__cxa_demangle");
	}
	char *d = NULL;
	int status = -1;
	if (demangle && mangled[0] == '_' && mangled[1] == 'Z')
		d = demangle(mangled, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		d = strdup(mangled);
	}
	if (!d || w->kernels.map.count > 100000) {
		free(d);
		return mangled; /* bounded cache: past it, mangled names */
	}
	if (gp_strmap_put(&w->kernels, (uint64_t)(uintptr_t)mangled, d) != 0)
		return mangled;
	return d;
}

/* ---- records ---- */

static void flow_end(struct gp_writer_ctx *w, int64_t pid, int64_t tid, uint64_t ts, uint32_t corr)
{
	if (!corr)
		return;
	gp_tw_begin(w->tw, GP_PH_LAUNCH_END, GP_EV_LAUNCH_END, GP_CAT_FLOW, pid, tid, gp_rel_ts(ts));
	gp_tw_field_str(w->tw, GP_T_BP, "e");
	gp_tw_field_u64(w->tw, GP_T_ID, corr);
	gp_tw_end(w->tw);
}

static int bad_range(struct gp_writer_ctx *w, uint64_t start, uint64_t end)
{
	if (start == 0 || end < start) {
		w->bad_records++;
		return 1;
	}
	return 0;
}

static void on_kernel(struct gp_writer_ctx *w, const CUpti_ActivityKernel10 *k)
{
	if (bad_range(w, k->start, k->end))
		return;
	int64_t gpid = gp_gpu_pid(w->host_pid, k->deviceId);
	gp_note_device(w, k->deviceId);
	gp_name_stream(w, k->deviceId, k->streamId);
	gp_tw_begin(w->tw, GP_PH_KERNEL, kernel_name(w, k->name), GP_CAT_KERNEL, gpid, gp_stream_tid(k->streamId),
		    gp_rel_ts(k->start));
	gp_tw_dur(w->tw, (int64_t)(k->end - k->start));
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_CORR, k->correlationId);
	char dims[96];
	snprintf(dims, sizeof(dims), "[%d,%d,%d]", k->gridX, k->gridY, k->gridZ);
	gp_tw_arg_raw(w->tw, GP_F_GRID, dims, strlen(dims));
	snprintf(dims, sizeof(dims), "[%d,%d,%d]", k->blockX, k->blockY, k->blockZ);
	gp_tw_arg_raw(w->tw, GP_F_BLOCK, dims, strlen(dims));
	gp_tw_arg_i64(w->tw, GP_F_SMEM_STATIC, k->staticSharedMemory);
	gp_tw_arg_i64(w->tw, GP_F_SMEM_DYNAMIC, k->dynamicSharedMemory);
	gp_tw_arg_u64(w->tw, GP_F_REGS, k->registersPerThread);
	gp_tw_end(w->tw);
	flow_end(w, gpid, gp_stream_tid(k->streamId), k->start, k->correlationId);
}

static void on_memcpy(struct gp_writer_ctx *w, const CUpti_ActivityMemcpy6 *m)
{
	if (bad_range(w, m->start, m->end))
		return;
	int64_t gpid = gp_gpu_pid(w->host_pid, m->deviceId);
	gp_note_device(w, m->deviceId);
	gp_name_stream(w, m->deviceId, m->streamId);
	gp_tw_begin(w->tw, GP_PH_MEMCPY, memcpy_name(m->copyKind), GP_CAT_MEMCPY, gpid, gp_stream_tid(m->streamId),
		    gp_rel_ts(m->start));
	gp_tw_dur(w->tw, (int64_t)(m->end - m->start));
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_CORR, m->correlationId);
	gp_tw_arg_u64(w->tw, GP_F_BYTES, m->bytes);
	gp_tw_arg_u64(w->tw, GP_F_KIND, m->copyKind);
	gp_tw_arg_str(w->tw, GP_F_SRC_KIND, memory_kind_name(m->srcKind));
	gp_tw_arg_str(w->tw, GP_F_DST_KIND, memory_kind_name(m->dstKind));
	gp_tw_arg_bool(w->tw, GP_F_ASYNC, (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0);
	gp_tw_end(w->tw);
	flow_end(w, gpid, gp_stream_tid(m->streamId), m->start, m->correlationId);
}

static void on_memset(struct gp_writer_ctx *w, const CUpti_ActivityMemset4 *m)
{
	if (bad_range(w, m->start, m->end))
		return;
	int64_t gpid = gp_gpu_pid(w->host_pid, m->deviceId);
	gp_note_device(w, m->deviceId);
	gp_name_stream(w, m->deviceId, m->streamId);
	gp_tw_begin(w->tw, GP_PH_MEMSET, GP_EV_MEMSET, GP_CAT_MEMSET, gpid, gp_stream_tid(m->streamId),
		    gp_rel_ts(m->start));
	gp_tw_dur(w->tw, (int64_t)(m->end - m->start));
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_CORR, m->correlationId);
	gp_tw_arg_u64(w->tw, GP_F_BYTES, m->bytes);
	gp_tw_arg_u64(w->tw, GP_F_VALUE, m->value);
	gp_tw_arg_str(w->tw, GP_F_KIND, memory_kind_name((CUpti_ActivityMemoryKind)m->memoryKind));
	gp_tw_end(w->tw);
	flow_end(w, gpid, gp_stream_tid(m->streamId), m->start, m->correlationId);
}

static void on_memory(struct gp_writer_ctx *w, const CUpti_ActivityMemory4 *m)
{
	int alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	if (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
		w->bad_records++;
		return;
	}
	/* the API callbacks record these (api_callbacks.c): not twice; counted,
	 * since CUPTI was not meant to write them and the program paid for them */
	if (gp_callbacks_tracking() &&
	    (m->isAsync || m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
	     m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED ||
	     m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED)) {
		w->skipped_memory_records++;
		return;
	}
	/* the device of the record's context where it is known (module
	 * globals come with deviceId 0, and no context, from any device:
	 * context_devices.c) */
	uint32_t device = m->deviceId;
	gp_ctxdev_device(m->contextId, &device);
	struct gp_memory_ev ev = {
		.ts = m->timestamp, .addr = m->address, .bytes = m->bytes, .corr = m->correlationId,
		.device = device, .stream = m->streamId, .kind = memory_kind_name(m->memoryKind),
		.counter = memory_kind_counter(m->memoryKind), .alloc = (uint8_t)alloc,
		.async = m->isAsync != 0,
	};
	if (m->isAsync && m->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
		int local = m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
		ev.pool = local ? GP_POOL_LOCAL : GP_POOL_IMPORTED;
		ev.pool_addr = m->memoryPoolConfig.address;
		ev.pool_size = local ? m->memoryPoolConfig.pool.size : 0;
		ev.pool_used = local ? m->memoryPoolConfig.utilizedSize : 0;
	}
	gp_emit_memory(w, &ev);
}

static void on_memory_pool(struct gp_writer_ctx *w, const CUpti_ActivityMemoryPool3 *p)
{
	const char *name;
	uint64_t size = p->size;
	switch (p->memoryPoolOperationType) {
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED: name = GP_EV_POOL_CREATE; break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED: name = GP_EV_POOL_DESTROY; size = 0; break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED: name = GP_EV_POOL_TRIM; break;
	default: w->bad_records++; return;
	}
	int local = p->memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	gp_note_device(w, p->deviceId);
	gp_tw_begin(w->tw, GP_PH_POOL_CREATE, name, GP_CAT_MEMORY, gp_gpu_pid(w->host_pid, p->deviceId), 0,
		    gp_rel_ts(p->timestamp));
	gp_tw_field_str(w->tw, GP_T_S, "t");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_hex(w->tw, GP_F_POOL, p->address);
	gp_tw_arg_str(w->tw, GP_F_POOL_TYPE, local ? "local" : "imported");
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, p->deviceId);
	gp_tw_arg_u64(w->tw, GP_F_CORR, p->correlationId);
	if (local) {
		gp_tw_arg_u64(w->tw, GP_F_SIZE, p->size);
		gp_tw_arg_u64(w->tw, GP_F_USED, p->utilizedSize);
		gp_tw_arg_u64(w->tw, GP_F_RELEASE_THRESHOLD, p->releaseThreshold);
	}
	if (p->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED)
		gp_tw_arg_u64(w->tw, GP_F_MIN_BYTES_TO_KEEP, p->minBytesToKeep);
	gp_tw_end(w->tw);
	if (!local)
		return;
	struct gp_mem_op op = {
		.ts = p->timestamp, .addr = p->address, .bytes = size, .device = p->deviceId,
		.type = GP_MEMOP_POOL_SIZE, .counter = GP_MC_POOL_RESERVED,
	};
	if (gp_memc_push(w->mc, &op, gp_emit_counter, w) != 0)
		atomic_fetch_add(&gp_rec.dropped_host, 1);
}

static void on_api(struct gp_writer_ctx *w, const CUpti_ActivityAPI *a, int driver)
{
	if (bad_range(w, a->start, a->end))
		return;
	const char *name = gp_api_name(driver, a->cbid);
	gp_name_host_thread(w, a->threadId);
	gp_tw_begin(w->tw, GP_PH_API_RUNTIME, name ? name : "cuda api",
		    driver ? GP_CAT_CUDA_DRIVER : GP_CAT_CUDA_RUNTIME, w->host_pid, a->threadId,
		    gp_rel_ts(a->start));
	gp_tw_dur(w->tw, (int64_t)(a->end - a->start));
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_CORR, a->correlationId);
	if (a->returnValue)
		gp_tw_arg_u64(w->tw, GP_F_RESULT, a->returnValue);
	gp_tw_end(w->tw);
	if (gp_api_is_launch(driver, a->cbid) && a->correlationId) {
		gp_tw_begin(w->tw, GP_PH_LAUNCH_START, GP_EV_LAUNCH_START, GP_CAT_FLOW, w->host_pid,
			    a->threadId, gp_rel_ts(a->start));
		gp_tw_field_u64(w->tw, GP_T_ID, a->correlationId);
		gp_tw_end(w->tw);
	}
}

static void on_device(struct gp_writer_ctx *w, const CUpti_ActivityDevice5 *d)
{
	if (d->id >= GP_MAX_DEVICES)
		return;
	struct gp_device_info *info = &w->dev[d->id];
	if (info->seen)
		return;
	info->seen = 1;
	snprintf(info->name, sizeof(info->name), "%s", d->name ? d->name : "CUDA device");
	info->total_memory = d->globalMemorySize;
	info->cc_major = d->computeCapabilityMajor;
	info->cc_minor = d->computeCapabilityMinor;
	const unsigned char *u = (const unsigned char *)d->uuid.bytes;
	snprintf(info->uuid, sizeof(info->uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	/* A device already used before its record came: named again (a later
	 * process_name for the same pid wins in Perfetto) and described. */
	if ((w->dev_counted >> d->id) & 1) {
		w->dev_counted &= ~(1ULL << d->id);
		gp_note_device(w, d->id);
	}
}

void gp_decode_cupti_buffer(struct gp_writer_ctx *w, uint8_t *data, size_t valid)
{
	CUpti_Activity *rec = NULL;
	while (cuptiActivityGetNextRecord(data, valid, &rec) == CUPTI_SUCCESS) {
		w->records++;
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			on_kernel(w, (const CUpti_ActivityKernel10 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			on_memcpy(w, (const CUpti_ActivityMemcpy6 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			on_memset(w, (const CUpti_ActivityMemset4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY2:
			on_memory(w, (const CUpti_ActivityMemory4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
			on_memory_pool(w, (const CUpti_ActivityMemoryPool3 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
			on_api(w, (const CUpti_ActivityAPI *)rec, 0);
			break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
			on_api(w, (const CUpti_ActivityAPI *)rec, 1);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			on_device(w, (const CUpti_ActivityDevice5 *)rec);
			break;
		default:
			break;
		}
	}
}
