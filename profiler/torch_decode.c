/* PyTorch's caching allocator, as gpuprof's hook saw it (torch_alloc.h) ->
 * trace events (TRACE_FORMAT.md, "PyTorch's caching allocator"): its blocks
 * on the allocating thread, its segments on the GPU's process, its
 * out-of-memory failures, the Python stacks, and a counter of its
 * allocated and reserved bytes. Writer thread only. */
#include "json_buf.h"
#include "torch_alloc.h"
#include "writer_ctx.h"

#include <string.h>

/* a block's bytes are kept in the map's pointer: never 0, below 2^63 */
#define BLOCK_BYTES_MAX (1ull << 62)

static void counter(struct gp_writer_ctx *w, uint32_t device, uint64_t ts)
{
	struct gp_torch_alloc_state *t = &w->torch_alloc;

	gp_note_device(w, device);
	gp_tw_begin(w->tw, GP_PH_TORCH_MEMORY, GP_EV_TORCH_MEMORY, GP_CAT_MEMORY, gp_gpu_pid(w->host_pid, device),
		    0, gp_rel_ts(ts));
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_ALLOCATED, t->allocated[device]);
	gp_tw_arg_u64(w->tw, GP_F_RESERVED, t->reserved[device]);
	gp_tw_end(w->tw);
}

static void block(struct gp_writer_ctx *w, const struct gp_ta_event *e, uint32_t device)
{
	struct gp_torch_alloc_state *t = &w->torch_alloc;
	int alloc = e->type == GP_TA_ALLOC;
	uint64_t bytes = e->bytes;
	int known = 1;

	if (alloc) {
		if (!bytes || bytes >= BLOCK_BYTES_MAX ||
		    gp_u64map_put(&t->blocks, e->addr, (void *)(uintptr_t)bytes) != 0) {
			atomic_fetch_add(&gp_rec.dropped_host, 1);
			return;
		}
		t->allocated[device] += bytes;
		if (e->flags & GP_TA_F_SIZE_GUESSED)
			t->guessed++;
	} else {
		bytes = (uint64_t)(uintptr_t)gp_u64map_del(&t->blocks, e->addr);
		known = bytes != 0;
		if (known)
			t->allocated[device] -= bytes;
		else
			t->unmatched_frees++;
	}
	gp_name_host_thread(w, e->tid);
	gp_tw_begin(w->tw, alloc ? GP_PH_TORCH_ALLOC : GP_PH_TORCH_FREE, alloc ? GP_EV_TORCH_ALLOC : GP_EV_TORCH_FREE,
		    GP_CAT_MEMORY, w->host_pid, e->tid, gp_rel_ts(e->ts));
	gp_tw_field_str(w->tw, GP_T_S, "t");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_hex(w->tw, GP_F_ADDR, e->addr);
	if (known)
		gp_tw_arg_u64(w->tw, GP_F_BYTES, bytes);
	gp_tw_arg_u64(w->tw, GP_F_REQUESTED, e->requested);
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, device);
	gp_tw_arg_hex(w->tw, GP_F_STREAM, e->stream);
	if (alloc && e->stack)
		gp_tw_arg_u64(w->tw, GP_F_STACK, e->stack);
	if (alloc && (e->flags & GP_TA_F_SIZE_GUESSED))
		gp_tw_arg_bool(w->tw, GP_F_GUESSED, 1);
	gp_tw_end(w->tw);
	if (known)
		counter(w, device, e->ts);
}

static void segment(struct gp_writer_ctx *w, const struct gp_ta_event *e, uint32_t device)
{
	struct gp_torch_alloc_state *t = &w->torch_alloc;
	int alloc = e->type == GP_TA_SEGMENT_ALLOC || e->type == GP_TA_SEGMENT_MAP;
	int mapped = e->type == GP_TA_SEGMENT_MAP || e->type == GP_TA_SEGMENT_UNMAP;

	if (alloc)
		t->reserved[device] += e->bytes;
	else
		t->reserved[device] = t->reserved[device] > e->bytes ? t->reserved[device] - e->bytes : 0;
	gp_note_device(w, device);
	gp_tw_begin(w->tw, alloc ? GP_PH_TORCH_SEGMENT_ALLOC : GP_PH_TORCH_SEGMENT_FREE,
		    alloc ? GP_EV_TORCH_SEGMENT_ALLOC : GP_EV_TORCH_SEGMENT_FREE, GP_CAT_MEMORY,
		    gp_gpu_pid(w->host_pid, device), 0, gp_rel_ts(e->ts));
	gp_tw_field_str(w->tw, GP_T_S, "t");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_hex(w->tw, GP_F_ADDR, e->addr);
	gp_tw_arg_u64(w->tw, GP_F_BYTES, e->bytes);
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, device);
	gp_tw_arg_hex(w->tw, GP_F_STREAM, e->stream);
	gp_tw_arg_bool(w->tw, GP_F_MAPPED, mapped);
	gp_tw_end(w->tw);
	counter(w, device, e->ts);
}

static void oom(struct gp_writer_ctx *w, const struct gp_ta_event *e, uint32_t device)
{
	gp_name_host_thread(w, e->tid);
	gp_tw_begin(w->tw, GP_PH_TORCH_OOM, GP_EV_TORCH_OOM, GP_CAT_MEMORY, w->host_pid, e->tid, gp_rel_ts(e->ts));
	gp_tw_field_str(w->tw, GP_T_S, "p");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_BYTES, e->bytes);
	gp_tw_arg_u64(w->tw, GP_F_REQUESTED, e->requested);
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, device);
	gp_tw_arg_u64(w->tw, GP_F_FREE, e->free);
	gp_tw_arg_u64(w->tw, GP_F_ALLOCATED, e->allocated);
	gp_tw_arg_u64(w->tw, GP_F_RESERVED, e->reserved);
	gp_tw_arg_hex(w->tw, GP_F_STREAM, e->stream);
	gp_tw_end(w->tw);
}

static void attach(struct gp_writer_ctx *w, const struct gp_ta_event *e, uint32_t device)
{
	struct gp_torch_alloc_state *t = &w->torch_alloc;

	/* the counter starts from what PyTorch had then */
	t->allocated[device] = e->allocated;
	t->reserved[device] = e->reserved;
	gp_tw_begin(w->tw, GP_PH_TORCH_ATTACH, GP_EV_TORCH_ATTACH, GP_CAT_MEMORY, w->host_pid, 0, gp_rel_ts(e->ts));
	gp_tw_field_str(w->tw, GP_T_S, "g");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, device);
	gp_tw_arg_u64(w->tw, GP_F_ALLOCATED, e->allocated);
	gp_tw_arg_u64(w->tw, GP_F_RESERVED, e->reserved);
	gp_tw_arg_bool(w->tw, GP_F_STACKS, e->stack != 0);
	gp_tw_end(w->tw);
	counter(w, device, e->ts);
}

void gp_decode_torch(struct gp_writer_ctx *w, const struct gp_host_ev *hev)
{
	struct gp_ta_event e;
	size_t len;
	const char *p = gp_hev_name(hev, &len);

	if (len != sizeof(e)) {
		w->bad_records++;
		return;
	}
	memcpy(&e, p, sizeof(e));
	if (e.version != GP_TA_VERSION || e.device < 0 || e.device >= GP_MAX_DEVICES) {
		w->bad_records++;
		return;
	}
	w->torch_alloc.events++;
	switch (e.type) {
	case GP_TA_ALLOC:
	case GP_TA_FREE:
		block(w, &e, (uint32_t)e.device);
		break;
	case GP_TA_SEGMENT_ALLOC:
	case GP_TA_SEGMENT_FREE:
	case GP_TA_SEGMENT_MAP:
	case GP_TA_SEGMENT_UNMAP:
		segment(w, &e, (uint32_t)e.device);
		break;
	case GP_TA_OOM:
		oom(w, &e, (uint32_t)e.device);
		break;
	case GP_TA_ATTACH:
		attach(w, &e, (uint32_t)e.device);
		break;
	default:
		w->torch_alloc.events--;
		w->bad_records++;
		break;
	}
}

/* A stack's text (torch_alloc.h's gp_ta_stack_fn format) as the JSON array
 * of torch.stack's frames; a frame cut off by the queue's bound, or not of
 * three parts, is left out. */
void gp_decode_torch_stack(struct gp_writer_ctx *w, const struct gp_host_ev *hev)
{
	size_t len, i = 0;
	const char *s = gp_hev_name(hev, &len);
	struct gp_buf frames;
	int first = 1;

	gp_buf_init(&frames, 0);
	gp_buf_putc(&frames, '[');
	while (i < len) {
		const char *rs = memchr(s + i, GP_TA_RS, len - i);
		const char *f = s + i, *u1, *u2;
		size_t n;

		if (!rs)
			break; /* cut: not a whole frame */
		n = (size_t)(rs - f);
		i += n + 1;
		u1 = memchr(f, GP_TA_US, n);
		u2 = u1 ? memchr(u1 + 1, GP_TA_US, (size_t)(f + n - u1 - 1)) : NULL;
		if (!u2)
			continue;
		uint64_t line = 0;
		for (const char *d = u1 + 1; d < u2 && *d >= '0' && *d <= '9' && line < 100000000; d++)
			line = line * 10 + (uint64_t)(*d - '0');
		gp_buf_putc(&frames, first ? '[' : ',');
		if (!first)
			gp_buf_putc(&frames, '[');
		first = 0;
		gp_buf_json_str(&frames, f, (size_t)(u1 - f));
		gp_buf_putc(&frames, ',');
		gp_buf_u64(&frames, line);
		gp_buf_putc(&frames, ',');
		gp_buf_json_str(&frames, u2 + 1, (size_t)(f + n - u2 - 1));
		gp_buf_putc(&frames, ']');
	}
	gp_buf_putc(&frames, ']');
	if (frames.failed) {
		gp_buf_free(&frames);
		atomic_fetch_add(&gp_rec.dropped_host, 1);
		return;
	}
	gp_tw_begin(w->tw, GP_PH_TORCH_STACK, GP_EV_TORCH_STACK, GP_CAT_MEMORY, w->host_pid, 0, gp_rel_ts(hev->ts));
	gp_tw_field_str(w->tw, GP_T_S, "g");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_STACK, hev->id);
	gp_tw_arg_raw(w->tw, GP_F_FRAMES, frames.data, frames.len);
	gp_tw_end(w->tw);
	gp_buf_free(&frames);
}
