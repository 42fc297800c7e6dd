/* One event line -> struct an_dec, see decode.h. The checks and their order
 * are the format's (TRACE_FORMAT.md); a bad line says the first thing wrong
 * with it. */
#include "decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "history.h"
#include "stacks.h"

const char *const an_kind_names[K_N] = {
	[K_DEVICE] = GP_KIND_DEVICE,
	[K_ARRAY] = GP_KIND_ARRAY,
	[K_DEVICE_STATIC] = GP_KIND_DEVICE_STATIC,
	[K_MANAGED] = GP_KIND_MANAGED,
	[K_MANAGED_STATIC] = GP_KIND_MANAGED_STATIC,
	[K_PINNED_HOST] = GP_KIND_PINNED_HOST,
	[K_PAGEABLE] = GP_KIND_PAGEABLE,
	[K_UNKNOWN] = GP_KIND_UNKNOWN,
};

/* What decoding one line needs: the line, and where its message goes. */
struct dc {
	const struct gp_tr_members *l;
	const char *line;
	char *why;
	size_t whycap;
	char what[AN_WHAT_MAX];
};

static int bad(struct dc *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct dc *x, const char *fmt, ...)
{
	va_list ap;

	if (x->why) {
		va_start(ap, fmt);
		vsnprintf(x->why, x->whycap, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

const char *an_ev_what(const struct gp_tr_members *l, char *buf)
{
	static const char *const known[] = {
		GP_EV_ALLOC, GP_EV_FREE, GP_EV_OOM, GP_EV_POOL_CREATE, GP_EV_POOL_DESTROY,
		GP_EV_POOL_TRIM, GP_EV_META, GP_EV_DEVICE, GP_EV_END, GP_EV_WATERMARK,
		GP_EV_DROPPED, GP_EV_TORCH_ALLOC, GP_EV_TORCH_FREE, GP_EV_TORCH_SEGMENT_ALLOC,
		GP_EV_TORCH_SEGMENT_FREE, GP_EV_TORCH_OOM, GP_EV_TORCH_STACK, GP_EV_TORCH_ATTACH,
		GP_EV_OUTLINE,
	};
	const struct gp_json_val *n = &l->top[TK_NAME], *cat = &l->top[TK_CAT];

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (gp_jv_is(n, known[i], strlen(known[i]))) {
			snprintf(buf, AN_WHAT_MAX, "%s event", known[i]);
			return buf;
		}
	}
	if (GP_JV_IS(cat, GP_CAT_NVTX))
		return "NVTX event";
	if (GP_JV_IS(cat, GP_CAT_CUDA_RUNTIME) || GP_JV_IS(cat, GP_CAT_CUDA_DRIVER))
		return "CUDA API event";
	if (GP_JV_IS(cat, GP_CAT_KERNEL))
		return "kernel event";
	return "event";
}

static const char *what(struct dc *x)
{
	return x->why ? an_ev_what(x->l, x->what) : "";
}

/* One of the recorder's own events (gpuprof.meta, gpuprof.end...): their
 * names are their category, "gpuprof", and a dot. */
static int own_event(const struct gp_json_val *name)
{
	size_t n = sizeof(GP_CAT_GPUPROF) - 1;

	return name->type == GP_JSON_STR && name->n > n + 1 && !memcmp(name->p, GP_CAT_GPUPROF, n) &&
	       name->p[n] == '.';
}

/* A mark of PyTorch's allocator history: longer than names may be
 * (AN_STR_MAX), and no event; see history.h. */
static int is_history(const struct gp_json_val *name)
{
	size_t n = sizeof(AN_HIST_PREFIX) - 1;

	return name->type == GP_JSON_STR && name->n > n && !memcmp(name->p, AN_HIST_PREFIX, n);
}

/* need_u64's message, out of its way: what(x) looks the event's name up,
 * and with it need_u64 took a frame of its own on every call */
static __attribute__((noinline, cold)) void bad_u64(struct dc *x, const struct gp_json_val *v,
						    const char *key, uint64_t max)
{
	gp_tr_bad_u64(what(x), v, key, max, x->why, x->whycap);
}

/* Reads a required member; on failure says which and why. */
static inline int need_u64(struct dc *x, const struct gp_json_val *v, const char *key,
			   uint64_t max, uint64_t *out)
{
	if (v->type != GP_JSON_NONE && !gp_json_val_u64(v, max, out))
		return 0;
	bad_u64(x, v, key, max);
	return -EINVAL; /* said so (the compiler sees *out set where 0) */
}

static int need_ts(struct dc *x, int64_t *ts)
{
	const struct gp_json_val *v = &x->l->top[TK_TS];

	if (v->type == GP_JSON_NONE)
		return bad(x, "%s without \"ts\"", what(x));
	if (gp_jv_us_to_ns(v, ts))
		return bad(x, "%s: \"ts\" is not a number of microseconds in range", what(x));
	return 0;
}

static int need_i64(struct dc *x, const struct gp_json_val *v, const char *key, int64_t *out)
{
	if (v->type == GP_JSON_NONE)
		return bad(x, "%s without \"%s\"", what(x), key);
	if (gp_jv_i64(v, out))
		return bad(x, "%s: \"%s\" is not an integer", what(x), key);
	return 0;
}

static int need_addr(struct dc *x, const struct gp_json_val *v, uint64_t *out)
{
	if (gp_jv_hex(v, out))
		return bad(x, "%s: \"addr\" is %s", what(x),
			   v->type == GP_JSON_NONE ? "missing" : "not an address (\"0x...\")");
	return 0;
}

/* A string member: 1, or 0 where it is absent and !required. */
static int check_str(struct dc *x, const struct gp_json_val *v, const char *key, int required)
{
	if (v->type == GP_JSON_STR)
		return 1;
	return gp_tr_check_str(what(x), v, key, required, x->why, x->whycap);
}

/* A string member in place; *set 0 where it is absent and !required. */
static int need_str(struct dc *x, const struct gp_json_val *v, const char *key, int required,
		    struct an_slice *out, uint8_t *set)
{
	int r = check_str(x, v, key, required);

	*set = r > 0;
	if (r > 0)
		*out = an_slice_of(x->line, v);
	return r < 0 ? r : 0;
}

int an_need_u64(const struct gp_tr_members *l, const struct gp_json_val *v, const char *key,
		uint64_t max, uint64_t *out, char *why, size_t whycap)
{
	struct dc x = { .l = l, .why = why, .whycap = whycap };

	return need_u64(&x, v, key, max, out);
}

int an_check_str(const struct gp_tr_members *l, const struct gp_json_val *v, const char *key,
		 int required, char *why, size_t whycap)
{
	struct dc x = { .l = l, .why = why, .whycap = whycap };

	return check_str(&x, v, key, required);
}

static int name_str(struct dc *x, const struct gp_json_val *v, const char *key, int required,
		    struct an_dec *d)
{
	uint8_t set;
	int r = need_str(x, v, key, required, &d->name, &set);

	if (!r && set) {
		d->name_is = DN_STR;
		if (!v->esc && v->n <= AN_DEC_NAME_COPY) {
			memcpy(d->name_copy, v->p, v->n);
			d->name_copied = 1;
		}
	}
	return r;
}

static int kind_of(const struct gp_json_val *v)
{
	for (int k = 0; k < K_N; k++)
		if (gp_jv_is(v, an_kind_names[k], strlen(an_kind_names[k])))
			return k;
	return K_UNKNOWN;
}

static int dec_memory(struct dc *x, int type, struct an_dec *d)
{
	const struct gp_json_val *a = x->l->args;
	struct an_ev *ev = &d->ev;
	uint64_t dev;
	int r, b;

	ev->type = (uint8_t)type;
	if ((r = need_u64(x, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev)))
		return r;
	ev->device = (uint32_t)dev;
	if (type == AE_POOL) {
		if (gp_jv_hex(&a[AK_POOL], &ev->pool.pool))
			return bad(x, "%s: \"pool\" is not an address", what(x));
		if (GP_JV_IS(&x->l->top[TK_NAME], GP_EV_POOL_DESTROY))
			ev->pool.size = 0;
		else if (a[AK_SIZE].type == GP_JSON_NONE)
			d->kind = DEC_NOTHING; /* an imported pool: its memory is its owner's */
		else if ((r = need_u64(x, &a[AK_SIZE], GP_F_SIZE, AN_MAX_BYTES, &ev->pool.size)))
			return r;
		return 0;
	}
	if ((r = need_addr(x, &a[AK_ADDR], &ev->mem.addr)) ||
	    (r = need_u64(x, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev->mem.bytes)))
		return r;
	if (a[AK_CORR].type != GP_JSON_NONE &&
	    (r = need_u64(x, &a[AK_CORR], GP_F_CORR, UINT64_MAX, &ev->mem.corr)))
		return r;
	ev->kind = (uint8_t)kind_of(&a[AK_KIND]);
	if (gp_jv_bool(&a[AK_ASYNC], &b) == 0 && b)
		ev->flags |= EVF_ASYNC;
	if (a[AK_POOL].type == GP_JSON_STR && gp_jv_hex(&a[AK_POOL], &ev->mem.pool) == 0 &&
	    a[AK_POOL_SIZE].type != GP_JSON_NONE) {
		if ((r = need_u64(x, &a[AK_POOL_SIZE], GP_F_POOL_SIZE, AN_MAX_BYTES,
				  &ev->mem.pool_size)))
			return r;
		ev->flags |= EVF_POOL_SIZE;
	}
	if (type == AE_ALLOC && a[AK_CALLER].type != GP_JSON_NONE &&
	    (r = need_str(x, &a[AK_CALLER], GP_F_CALLER, 1, &d->caller, &d->has_caller)))
		return r;
	/* recorded by the API callbacks: says its thread and API itself */
	if (a[AK_THREAD].type != GP_JSON_NONE) {
		uint64_t th;

		if ((r = need_u64(x, &a[AK_THREAD], GP_F_THREAD, UINT32_MAX, &th)) ||
		    (r = name_str(x, &a[AK_API], GP_F_API, 1, d)))
			return r;
		ev->tid = (int64_t)th;
		ev->flags |= EVF_THREAD;
	}
	return 0;
}

static int dec_oom(struct dc *x, struct an_dec *d)
{
	const struct gp_json_val *a = x->l->args;
	struct an_ev *ev = &d->ev;
	uint64_t dev = 0;
	int64_t res = 0;
	int r;

	ev->type = AE_OOM;
	if ((r = need_i64(x, &x->l->top[TK_TID], GP_T_TID, &ev->tid)) ||
	    (r = need_u64(x, &a[AK_BYTES], GP_F_BYTES, UINT64_MAX, &ev->oom.requested)))
		return r;
	if (a[AK_DEVICE].type != GP_JSON_NONE &&
	    (r = need_u64(x, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev)))
		return r;
	ev->device = (uint32_t)dev;
	if (a[AK_FREE].type != GP_JSON_NONE && a[AK_TOTAL].type != GP_JSON_NONE) {
		if ((r = need_u64(x, &a[AK_FREE], GP_F_FREE, AN_MAX_BYTES, &ev->oom.free)) ||
		    (r = need_u64(x, &a[AK_TOTAL], GP_F_TOTAL, AN_MAX_BYTES, &ev->oom.total)))
			return r;
		ev->flags |= EVF_MEMINFO;
	}
	if (a[AK_RESULT].type != GP_JSON_NONE &&
	    (r = need_i64(x, &a[AK_RESULT], GP_F_RESULT, &res)))
		return r;
	ev->oom.result = res;
	return name_str(x, &a[AK_API], GP_F_API, 0, d);
}

/* ---- PyTorch's caching allocator, from gpuprof's hook (torch.* events) ---- */

static int dec_torch_block(struct dc *x, int type, struct an_dec *d)
{
	const struct gp_json_val *a = x->l->args;
	struct an_ev *ev = &d->ev;
	uint64_t dev;
	int r, b;

	ev->type = (uint8_t)type;
	ev->kind = K_DEVICE;
	ev->flags = EVF_TORCH | EVF_THREAD;
	if ((r = need_i64(x, &x->l->top[TK_TID], GP_T_TID, &ev->tid)) ||
	    (r = need_u64(x, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev)) ||
	    (r = need_addr(x, &a[AK_ADDR], &ev->mem.addr)) ||
	    (r = need_u64(x, &a[AK_REQUESTED], GP_F_REQUESTED, AN_MAX_BYTES, &ev->mem.requested)))
		return r;
	ev->device = (uint32_t)dev;
	if ((type == AE_ALLOC || a[AK_BYTES].type != GP_JSON_NONE) &&
	    (r = need_u64(x, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev->mem.bytes)))
		return r;
	if (type == AE_ALLOC && a[AK_STACK].type != GP_JSON_NONE &&
	    (r = need_u64(x, &a[AK_STACK], GP_F_STACK, AN_MAX_STACK_ID - 1, &ev->mem.stack)))
		return r;
	if (type == AE_ALLOC && gp_jv_bool(&a[AK_GUESSED], &b) == 0 && b)
		d->guessed = 1;
	d->name_is = DN_TORCH_API;
	return 0;
}

static int dec_torch_segment(struct dc *x, int release, struct an_dec *d)
{
	const struct gp_json_val *a = x->l->args;
	struct an_ev *ev = &d->ev;
	uint64_t dev;
	int r, mapped;

	ev->type = AE_SEGMENT;
	ev->flags = release ? EVF_RELEASE : 0;
	if ((r = need_u64(x, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev)) ||
	    (r = need_addr(x, &a[AK_ADDR], &ev->segment.addr)) ||
	    (r = need_u64(x, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev->segment.bytes)))
		return r;
	if (gp_jv_bool(&a[AK_MAPPED], &mapped))
		return bad(x, "%s: \"mapped\" is not true or false", what(x));
	ev->device = (uint32_t)dev;
	if (mapped)
		ev->flags |= EVF_MAPPED;
	return 0;
}

/* The device's size is source.c's to add (its gpuprof.device). */
static int dec_torch_oom(struct dc *x, struct an_dec *d)
{
	const struct gp_json_val *a = x->l->args;
	struct an_ev *ev = &d->ev;
	uint64_t dev;
	int r;

	ev->type = AE_OOM;
	ev->flags = EVF_TORCH;
	if ((r = need_i64(x, &x->l->top[TK_TID], GP_T_TID, &ev->tid)) ||
	    (r = need_u64(x, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev)) ||
	    (r = need_u64(x, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev->oom.requested)) ||
	    (r = need_u64(x, &a[AK_REQUESTED], GP_F_REQUESTED, AN_MAX_BYTES, &ev->oom.torch.block)) ||
	    (r = need_u64(x, &a[AK_FREE], GP_F_FREE, AN_MAX_BYTES, &ev->oom.free)) ||
	    (r = need_u64(x, &a[AK_ALLOCATED], GP_F_ALLOCATED, AN_MAX_BYTES,
			  &ev->oom.torch.allocated)) ||
	    (r = need_u64(x, &a[AK_RESERVED], GP_F_RESERVED, AN_MAX_BYTES, &ev->oom.torch.reserved)))
		return r;
	ev->device = (uint32_t)dev;
	d->name_is = DN_TORCH_API;
	return 0;
}

static int dec_torch_attach(struct dc *x, struct an_dec *d)
{
	const struct gp_json_val *a = x->l->args;
	struct an_ev *ev = &d->ev;
	uint64_t dev;
	int r, stacks;

	ev->type = AE_ATTACH;
	if ((r = need_u64(x, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev)) ||
	    (r = need_u64(x, &a[AK_ALLOCATED], GP_F_ALLOCATED, AN_MAX_BYTES, &ev->attach.allocated)) ||
	    (r = need_u64(x, &a[AK_RESERVED], GP_F_RESERVED, AN_MAX_BYTES, &ev->attach.reserved)))
		return r;
	if (gp_jv_bool(&a[AK_STACKS], &stacks))
		return bad(x, "%s: \"stacks\" is not true or false", what(x));
	ev->device = (uint32_t)dev;
	if (stacks)
		ev->flags |= EVF_STACKS;
	return 0;
}

static int dec_nvtx(struct dc *x, char ph, struct an_dec *d)
{
	const struct gp_tr_members *l = x->l;
	struct an_ev *ev = &d->ev;
	int r;

	if ((r = need_i64(x, &l->top[TK_TID], GP_T_TID, &ev->tid)))
		return r;
	switch (ph) {
	case 'B': ev->type = AE_PUSH; break;
	case 'E': ev->type = AE_POP; break;
	case 'b': ev->type = AE_START; break;
	case 'e': ev->type = AE_END; break;
	default: ev->type = AE_MARK; break;
	}
	if (ev->type == AE_START || ev->type == AE_END) {
		if ((r = need_u64(x, &l->top[TK_ID], GP_T_ID, UINT64_MAX, &ev->range.id)))
			return r;
	}
	if (ev->type == AE_MARK && is_history(&l->top[TK_NAME])) {
		d->kind = DEC_MEMBERS;
		d->members = DM_HISTORY;
		return 0;
	}
	if (ev->type != AE_POP && ev->type != AE_END)
		return name_str(x, &l->top[TK_NAME], GP_T_NAME, 1, d);
	return 0;
}

/* An API call: its end and name, for the memory events that name it
 * (corr.h). */
static int dec_api(struct dc *x, struct an_dec *d)
{
	const struct gp_tr_members *l = x->l;
	const struct gp_json_val *dur_v = &l->top[TK_DUR];
	int64_t dur = 0;
	int r;

	if (l->args[AK_CORR].type == GP_JSON_NONE) {
		d->kind = DEC_NOTHING;
		return 0;
	}
	d->kind = DEC_API;
	if ((r = need_u64(x, &l->args[AK_CORR], GP_F_CORR, UINT64_MAX, &d->ev.coll.corr)) ||
	    (r = need_i64(x, &l->top[TK_TID], GP_T_TID, &d->ev.tid)))
		return r;
	if (dur_v->type != GP_JSON_NONE && (gp_jv_us_to_ns(dur_v, &dur) || dur < 0))
		return bad(x, "%s: \"dur\" is not a duration", what(x));
	d->ev.ts += dur;
	return name_str(x, &l->top[TK_NAME], GP_T_NAME, 1, d);
}

/* A collective's kernel (collective.h): whether its pid is one of this
 * process's GPUs is source.c's to say (the meta's pid), before anything
 * wrong found after it. */
static int dec_collective(struct dc *x, struct an_dec *d)
{
	const struct gp_tr_members *l = x->l;
	struct an_ev *ev = &d->ev;
	int64_t stream, dur;
	int r;

	ev->type = AE_COLL;
	if ((r = need_i64(x, &l->top[TK_PID], GP_T_PID, &d->pid)) ||
	    (r = need_i64(x, &l->top[TK_TID], GP_T_TID, &stream)))
		return r;
	d->pid_set = 1;
	if (l->top[TK_DUR].type == GP_JSON_NONE || gp_jv_us_to_ns(&l->top[TK_DUR], &dur) || dur < 0)
		return bad(x, "%s: \"dur\" is not a duration", what(x));
	if (l->args[AK_CORR].type != GP_JSON_NONE &&
	    (r = need_u64(x, &l->args[AK_CORR], GP_F_CORR, UINT64_MAX, &ev->coll.corr)))
		return r;
	d->name = an_slice_of(x->line, &l->top[TK_NAME]);
	d->name_is = DN_COLL_KERNEL;
	ev->coll.duration = dur;
	ev->coll.stream = stream;
	return 0;
}

static int members(struct an_dec *d, int which)
{
	d->kind = DEC_MEMBERS;
	d->members = (uint8_t)which;
	return 0;
}

int an_decode(const struct gp_tr_members *l, const char *line, int first, struct an_dec *d,
	      char *why, size_t whycap)
{
	struct dc x = { .l = l, .line = line, .why = whycap ? why : NULL, .whycap = whycap };
	const struct gp_json_val *name = &l->top[TK_NAME], *cat = &l->top[TK_CAT];
	char ph;
	int r;

	memset(d, 0, sizeof(*d));
	d->kind = DEC_EVENT;
	if (l->ignored && !first) {
		d->kind = DEC_IGNORED;
		return 0;
	}
	if (l->top[TK_PH].type != GP_JSON_STR || l->top[TK_PH].n != 1)
		return bad(&x, "event without a one-letter \"ph\"");
	ph = l->top[TK_PH].p[0];
	if (l->top[TK_ARGS].type != GP_JSON_NONE && l->top[TK_ARGS].type != GP_JSON_OBJ)
		return bad(&x, "%s: \"args\" is not an object", what(&x));
	if (first) {
		if (GP_JV_IS(name, GP_MERGE_EVENT))
			return bad(&x, GP_MERGE_NOT_A_TRACE);
		if (ph != 'i' || !GP_JV_IS(name, GP_EV_META))
			return bad(&x, "not a gpuprof trace (the first event is not gpuprof.meta)");
		return members(d, DM_META);
	}
	switch (ph) {
	case 'i':
		if (GP_JV_IS(cat, GP_CAT_MEMORY)) {
			if ((r = need_ts(&x, &d->ev.ts)))
				return r;
			if (GP_JV_IS(name, GP_EV_ALLOC))
				return dec_memory(&x, AE_ALLOC, d);
			if (GP_JV_IS(name, GP_EV_FREE))
				return dec_memory(&x, AE_FREE, d);
			if (GP_JV_IS(name, GP_EV_OOM))
				return dec_oom(&x, d);
			if (GP_JV_IS(name, GP_EV_POOL_CREATE) || GP_JV_IS(name, GP_EV_POOL_DESTROY) ||
			    GP_JV_IS(name, GP_EV_POOL_TRIM))
				return dec_memory(&x, AE_POOL, d);
			if (GP_JV_IS(name, GP_EV_TORCH_ALLOC))
				return dec_torch_block(&x, AE_ALLOC, d);
			if (GP_JV_IS(name, GP_EV_TORCH_FREE))
				return dec_torch_block(&x, AE_FREE, d);
			if (GP_JV_IS(name, GP_EV_TORCH_SEGMENT_ALLOC))
				return dec_torch_segment(&x, 0, d);
			if (GP_JV_IS(name, GP_EV_TORCH_SEGMENT_FREE))
				return dec_torch_segment(&x, 1, d);
			if (GP_JV_IS(name, GP_EV_TORCH_OOM))
				return dec_torch_oom(&x, d);
			if (GP_JV_IS(name, GP_EV_TORCH_ATTACH))
				return dec_torch_attach(&x, d);
			if (GP_JV_IS(name, GP_EV_TORCH_STACK))
				return members(d, DM_STACK);
			break;
		}
		if (GP_JV_IS(cat, GP_CAT_NVTX)) {
			if ((r = need_ts(&x, &d->ev.ts)))
				return r;
			return dec_nvtx(&x, ph, d);
		}
		if (own_event(name)) {
			if (GP_JV_IS(name, GP_EV_WATERMARK)) {
				if ((r = need_ts(&x, &d->ev.ts)))
					return r;
				d->kind = DEC_WATERMARK;
				return 0;
			}
			if (GP_JV_IS(name, GP_EV_DEVICE))
				return members(d, DM_DEVICE);
			if (GP_JV_IS(name, GP_EV_END))
				return members(d, DM_END);
			if (GP_JV_IS(name, GP_EV_DROPPED))
				return members(d, DM_DROPPED);
			if (GP_JV_IS(name, GP_EV_OUTLINE) || GP_JV_IS(name, GP_EV_WINDOW)) {
				if ((r = need_ts(&x, &d->ev.ts)))
					return r;
				return members(d, GP_JV_IS(name, GP_EV_OUTLINE) ? DM_OUTLINE : DM_WINDOW);
			}
			if (GP_JV_IS(name, GP_EV_DUMP))
				return members(d, DM_DUMP);
			if (GP_JV_IS(name, GP_EV_CAP)) {
				if ((r = need_ts(&x, &d->ev.ts)))
					return r;
				return members(d, DM_CAP);
			}
			if (GP_JV_IS(name, GP_EV_META))
				return bad(&x, "a second gpuprof.meta: traces joined into one file?");
		}
		break;
	case 'B':
	case 'E':
	case 'b':
	case 'e':
		if (GP_JV_IS(cat, GP_CAT_NVTX)) {
			if ((r = need_ts(&x, &d->ev.ts)))
				return r;
			return dec_nvtx(&x, ph, d);
		}
		break;
	case 'X':
		if (GP_JV_IS(cat, GP_CAT_CUDA_RUNTIME) || GP_JV_IS(cat, GP_CAT_CUDA_DRIVER)) {
			if ((r = need_ts(&x, &d->ev.ts)))
				return r;
			return dec_api(&x, d);
		}
		if (GP_JV_IS(cat, GP_CAT_KERNEL) && name->type == GP_JSON_STR &&
		    gp_tr_is_coll_kernel((const char *)name->p, name->n)) {
			if ((r = need_ts(&x, &d->ev.ts)))
				return r;
			return dec_collective(&x, d);
		}
		break;
	default:
		break;
	}
	d->kind = DEC_IGNORED;
	return 0;
}

int an_decode_rec(const struct gp_tr_members *l, const char *line, size_t n, void *rec)
{
	struct an_dec *d = rec;

	(void)n;
	return an_decode(l, line, 0, d, NULL, 0) == 0 && d->kind != DEC_MEMBERS;
}
