/* One trace file -> checked events in time order, see source.h. */
#include "source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_kernel.h"
#include "exporters/in_file.h"

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

/* ts_base_ns + ts must stay inside int64 */
#define MAX_TS_BASE 4000000000000000000ull

static int say(struct an_source *s, char *err, size_t errcap, int status, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* "PATH:LINE: message"; returns status negated for an_source_next. */
static int say(struct an_source *s, char *err, size_t errcap, int status, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errcap, "%s:%" PRIu64 ": ", s->path, gp_tr_state(s->in)->line_no);
	if (n < 0 || (size_t)n >= errcap)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(err + n, errcap - (size_t)n, fmt, ap);
	va_end(ap);
	return -status;
}

static int oom_err(struct an_source *s, char *err, size_t errcap)
{
	return say(s, err, errcap, GP_AN_FAIL, "out of memory");
}

/* One of the recorder's own events (gpuprof.meta, gpuprof.end...): their
 * names are their category, "gpuprof", and a dot. */
static int own_event(const struct gp_json_val *name)
{
	size_t n = sizeof(GP_CAT_GPUPROF) - 1;

	return name->type == GP_JSON_STR && name->n > n + 1 && !memcmp(name->p, GP_CAT_GPUPROF, n) &&
	       name->p[n] == '.';
}

/* What to call the event of the current line in a message: its own name
 * only when it is one of the format's, never user text. */
static const char *ev_what(const struct gp_tr_members *l)
{
	static const char *const known[] = {
		GP_EV_ALLOC, GP_EV_FREE, GP_EV_OOM, GP_EV_POOL_CREATE, GP_EV_POOL_DESTROY,
		GP_EV_POOL_TRIM, GP_EV_META, GP_EV_DEVICE, GP_EV_END, GP_EV_WATERMARK,
		GP_EV_DROPPED, GP_EV_TORCH_ALLOC, GP_EV_TORCH_FREE, GP_EV_TORCH_SEGMENT_ALLOC,
		GP_EV_TORCH_SEGMENT_FREE, GP_EV_TORCH_OOM, GP_EV_TORCH_STACK, GP_EV_TORCH_ATTACH,
	};
	static char buf[48];
	const struct gp_json_val *n = &l->top[TK_NAME], *cat = &l->top[TK_CAT];

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (gp_jv_is(n, known[i], strlen(known[i]))) {
			snprintf(buf, sizeof(buf), "%s event", known[i]);
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

/* Reads a required member; on failure says which and why. */
static int need_u64(struct an_source *s, const struct gp_json_val *v, const char *key, uint64_t max,
		    uint64_t *out, char *err, size_t errcap)
{
	if (v->type == GP_JSON_NONE)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s without \"%s\"",
			   ev_what(&s->line), key);
	if (gp_jv_u64(v, out))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"%s\" is not a non-negative integer",
			   ev_what(&s->line), key);
	if (*out > max)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"%s\" is absurd (%" PRIu64 ")",
			   ev_what(&s->line), key, *out);
	return 0;
}

static int need_ts(struct an_source *s, int64_t *ts, char *err, size_t errcap)
{
	const struct gp_json_val *v = &s->line.top[TK_TS];

	if (v->type == GP_JSON_NONE)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s without \"ts\"", ev_what(&s->line));
	if (gp_jv_us_to_ns(v, ts))
		return say(s, err, errcap, GP_AN_BAD_INPUT,
			   "%s: \"ts\" is not a number of microseconds in range", ev_what(&s->line));
	return 0;
}

static int need_i64(struct an_source *s, const struct gp_json_val *v, const char *key, int64_t *out,
		    char *err, size_t errcap)
{
	if (v->type == GP_JSON_NONE)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s without \"%s\"", ev_what(&s->line), key);
	if (gp_jv_i64(v, out))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"%s\" is not an integer",
			   ev_what(&s->line), key);
	return 0;
}

/* The string v unescaped, in the scratch buffer when it had escapes. 0 or
 * -ENOMEM. */
static int unescape(struct an_source *s, const struct gp_json_val *v, const char **p, size_t *n)
{
	if (v->n > s->scratch_cap) {
		char *b = realloc(s->scratch, v->n);

		if (!b)
			return -ENOMEM;
		s->scratch = b;
		s->scratch_cap = v->n;
	}
	return gp_jv_str(v, s->scratch, p, n);
}

/* The string value of v, interned; *out NULL when v is absent and !required. */
static int get_str(struct an_source *s, const struct gp_json_val *v, const char *key, int required,
		   struct an_str **out, char *err, size_t errcap)
{
	const char *p;
	size_t n;

	*out = NULL;
	if (v->type == GP_JSON_NONE && !required)
		return 0;
	if (v->type != GP_JSON_STR)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"%s\" is %s", ev_what(&s->line),
			   key, v->type == GP_JSON_NONE ? "missing" : "not a string");
	if (unescape(s, v, &p, &n))
		return oom_err(s, err, errcap);
	if (n > 0 && n <= AN_STR_MAX) {
		unsigned slot = (unsigned)(n * 31 + (unsigned char)p[0] + (unsigned char)p[n - 1]) & 15;
		struct an_str *r = s->recent[slot];

		if (r && r->len == n && memcmp(r->s, p, n) == 0) {
			*out = an_str_ref(r);
			return 0;
		}
		*out = an_str_intern(s->st, p, n);
		if (!*out)
			return oom_err(s, err, errcap);
		/* only names stored as they came (nothing replaced) can match raw bytes */
		if (memcmp((*out)->s, p, n) == 0) {
			an_str_unref(s->st, s->recent[slot]);
			s->recent[slot] = an_str_ref(*out);
		}
		return 0;
	}
	*out = an_str_intern(s->st, p, n);
	return *out ? 0 : oom_err(s, err, errcap);
}

static int kind_of(const struct gp_json_val *v)
{
	for (int k = 0; k < K_N; k++)
		if (gp_jv_is(v, an_kind_names[k], strlen(an_kind_names[k])))
			return k;
	return K_UNKNOWN;
}

/* A rank or a count of gpuprof.meta: *out -1 when absent. */
static int job_id(struct an_source *s, const struct gp_json_val *v, const char *name, int64_t *out,
		  char *err, size_t errcap)
{
	uint64_t x;
	int r;

	*out = -1;
	if (v->type == GP_JSON_NONE)
		return 0;
	if ((r = need_u64(s, v, name, 1u << 24, &x, err, errcap)))
		return r;
	*out = (int64_t)x;
	return 0;
}

static int on_meta(struct an_source *s, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	uint64_t format, base, pid;
	int r;

	if ((r = need_u64(s, &a[AK_FORMAT], GP_F_FORMAT, UINT32_MAX, &format, err, errcap)))
		return r;
	if (format != 1)
		return say(s, err, errcap, GP_AN_BAD_INPUT,
			   "trace format %" PRIu64 " (this gpuprof reads format 1)", format);
	if ((r = need_u64(s, &a[AK_PID], GP_F_PID, INT32_MAX, &pid, err, errcap)) ||
	    (r = need_u64(s, &a[AK_TS_BASE_NS], GP_F_TS_BASE_NS, MAX_TS_BASE, &base, err, errcap)))
		return r;
	s->pid = (int64_t)pid;
	s->ts_base_ns = (int64_t)base;
	if (a[AK_START_UNIX_NS].type != GP_JSON_NONE &&
	    (r = need_u64(s, &a[AK_START_UNIX_NS], GP_F_START_UNIX_NS, UINT64_MAX, &s->start_unix_ns,
			  err, errcap)))
		return r;
	/* which process of a distributed job this is: -1 where not said */
	if ((r = job_id(s, &a[AK_RANK], GP_F_RANK, &s->rank, err, errcap)) ||
	    (r = job_id(s, &a[AK_WORLD_SIZE], GP_F_WORLD_SIZE, &s->world_size, err, errcap)) ||
	    (r = job_id(s, &a[AK_LOCAL_RANK], GP_F_LOCAL_RANK, &s->local_rank, err, errcap)) ||
	    (r = job_id(s, &a[AK_LOCAL_WORLD_SIZE], GP_F_LOCAL_WORLD_SIZE, &s->local_world_size, err,
			errcap)))
		return r;
	if (a[AK_JOB_START_UNIX_NS].type != GP_JSON_NONE &&
	    (r = need_u64(s, &a[AK_JOB_START_UNIX_NS], GP_F_JOB_START_UNIX_NS, UINT64_MAX,
			  &s->job_start_unix_ns, err, errcap)))
		return r;
	if ((r = get_str(s, &a[AK_CMDLINE], GP_F_CMDLINE, 0, &s->cmdline, err, errcap)) ||
	    (r = get_str(s, &a[AK_HOSTNAME], GP_F_HOSTNAME, 0, &s->hostname, err, errcap)) ||
	    (r = get_str(s, &a[AK_VERSION], GP_F_VERSION, 0, &s->version, err, errcap)))
		return r;
	s->mode = MODE_CUDA;
	if (GP_JV_IS(&a[AK_MODE], "tensor"))
		s->mode = MODE_TENSOR;
	else if (GP_JV_IS(&a[AK_MODE], "native"))
		s->mode = MODE_NATIVE;
	s->statics = STATICS_RUN;
	if (GP_JV_IS(&a[AK_STATICS], "none"))
		s->statics = STATICS_NONE;
	else if (a[AK_STATICS].type != GP_JSON_NONE && !GP_JV_IS(&a[AK_STATICS], "run"))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"statics\" is not run or none",
			   GP_EV_META);
	/* older traces may place module globals on device 0 (analyze.c) */
	s->memory_by_context = GP_JV_IS(&a[AK_MEMORY_DEVICE], "context");
	s->have_meta = 1;
	return 0;
}

static int on_device(struct an_source *s, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	uint64_t dev, total = 0;
	struct an_devinfo *d;
	int r;

	if ((r = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)))
		return r;
	if (a[AK_TOTAL_MEMORY].type != GP_JSON_NONE &&
	    (r = need_u64(s, &a[AK_TOTAL_MEMORY], GP_F_TOTAL_MEMORY, AN_MAX_BYTES, &total, err, errcap)))
		return r;
	d = &s->dev[dev];
	an_str_unref(s->st, d->name);
	an_str_unref(s->st, d->uuid);
	d->name = d->uuid = NULL;
	d->seen = 1;
	d->total_memory = total;
	if ((r = get_str(s, &a[AK_NAME], GP_F_NAME, 0, &d->name, err, errcap)) ||
	    (r = get_str(s, &a[AK_UUID], GP_F_UUID, 0, &d->uuid, err, errcap)))
		return r;
	return 0;
}

static void opt_u64(const struct gp_json_val *v, uint64_t *out)
{
	uint64_t x;

	if (gp_jv_u64(v, &x) == 0)
		*out = x;
}

static int on_end(struct an_source *s)
{
	const struct gp_json_val *a = s->line.args;
	int64_t ts;
	int b;

	s->have_end = 1;
	/* when the recorder finished the trace (a program ended by a signal
	 * may have been idle long before); a bad ts is not said */
	if (gp_jv_us_to_ns(&s->line.top[TK_TS], &ts) == 0)
		s->end_ts = ts;
	if (gp_jv_bool(&a[AK_CLEAN], &b) == 0)
		s->end_clean = b;
	if (gp_jv_bool(&a[AK_RECOVERED], &b) == 0)
		s->end_recovered = b;
	uint64_t sig;
	if (gp_jv_u64(&a[AK_SIGNAL], &sig) == 0 && sig > 0 && sig < 128)
		s->end_signal = (int)sig;
	s->end_counts = a[AK_DROPPED_CUPTI].type == GP_JSON_NUM;
	opt_u64(&a[AK_DROPPED_CUPTI], &s->dropped_cupti);
	opt_u64(&a[AK_DROPPED_HOST], &s->dropped_host);
	opt_u64(&a[AK_LATE_MEMORY_RECORDS], &s->late_records);
	opt_u64(&a[AK_LINES_SKIPPED], &s->recover_lines_skipped);
	opt_u64(&a[AK_BYTES_SKIPPED], &s->recover_bytes_skipped);
	opt_u64(&a[AK_GZIP_GAPS], &s->recover_gzip_gaps);
	opt_u64(&a[AK_DAMAGE_AFTER], &s->recover_damage_after);
	return 0;
}

static int push(struct an_source *s, struct an_ev *ev, char *err, size_t errcap)
{
	if (ev->ts > s->last_ts)
		s->last_ts = ev->ts;
	if (an_reorder_push(&s->ro, ev) != 0) {
		an_str_unref(s->st, ev->name);
		return oom_err(s, err, errcap);
	}
	return 0;
}

static int caller_library(struct an_source *s, const struct gp_json_val *v, uint64_t *out,
			  char *err, size_t errcap);

static int on_memory(struct an_source *s, int type, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	struct an_ev ev = { .type = (uint8_t)type, .ts = ts };
	uint64_t dev;
	int r, b;

	if ((r = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)))
		return r;
	ev.device = (uint32_t)dev;
	if (type == AE_POOL) {
		if (gp_jv_hex(&a[AK_POOL], &ev.pool.pool))
			return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"pool\" is not an address",
				   ev_what(&s->line));
		if (GP_JV_IS(&s->line.top[TK_NAME], GP_EV_POOL_DESTROY))
			ev.pool.size = 0;
		else if (a[AK_SIZE].type == GP_JSON_NONE)
			return 0; /* an imported pool: its memory is its owner's */
		else if ((r = need_u64(s, &a[AK_SIZE], GP_F_SIZE, AN_MAX_BYTES, &ev.pool.size, err,
				       errcap)))
			return r;
		return push(s, &ev, err, errcap);
	}
	if (gp_jv_hex(&a[AK_ADDR], &ev.mem.addr))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"addr\" is %s", ev_what(&s->line),
			   a[AK_ADDR].type == GP_JSON_NONE ? "missing" : "not an address (\"0x...\")");
	if ((r = need_u64(s, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev.mem.bytes, err, errcap)))
		return r;
	if (a[AK_CORR].type != GP_JSON_NONE &&
	    (r = need_u64(s, &a[AK_CORR], GP_F_CORR, UINT64_MAX, &ev.mem.corr, err, errcap)))
		return r;
	ev.kind = (uint8_t)kind_of(&a[AK_KIND]);
	if (gp_jv_bool(&a[AK_ASYNC], &b) == 0 && b)
		ev.flags |= EVF_ASYNC;
	if (a[AK_POOL].type == GP_JSON_STR && gp_jv_hex(&a[AK_POOL], &ev.mem.pool) == 0 &&
	    a[AK_POOL_SIZE].type != GP_JSON_NONE) {
		if ((r = need_u64(s, &a[AK_POOL_SIZE], GP_F_POOL_SIZE, AN_MAX_BYTES,
				  &ev.mem.pool_size, err, errcap)))
			return r;
		ev.flags |= EVF_POOL_SIZE;
	}
	if (type == AE_ALLOC && a[AK_CALLER].type != GP_JSON_NONE &&
	    (r = caller_library(s, &a[AK_CALLER], &ev.mem.library, err, errcap)))
		return r;
	/* recorded by the API callbacks: says its thread and API itself */
	if (a[AK_THREAD].type != GP_JSON_NONE) {
		uint64_t th;
		if ((r = need_u64(s, &a[AK_THREAD], GP_F_THREAD, UINT32_MAX, &th, err, errcap)) ||
		    (r = get_str(s, &a[AK_API], GP_F_API, 1, &ev.name, err, errcap)))
			return r;
		ev.tid = (int64_t)th;
		ev.flags |= EVF_THREAD;
	}
	return push(s, &ev, err, errcap);
}

/* What a caller (a library's file, as the recorder names it) is: the
 * libraries whose memory users ask about, by the package or file that makes
 * their calls. */
static const char *library_of(const char *caller)
{
	static const struct {
		const char *part, *library;
	} known[] = {
		{ "libcublas", "cuBLAS" },    { "libcudnn", "cuDNN" },
		{ "libnccl", "NCCL" },        { "libcufft", "cuFFT" },
		{ "libcusparse", "cuSPARSE" }, { "libcusolver", "cuSOLVER" },
		{ "libcurand", "cuRAND" },    { "libnvrtc", "NVRTC" },
		{ "cupy", "CuPy" },           { "jaxlib", "JAX/XLA" },
		{ "jax_plugins", "JAX/XLA" }, { "xla_", "JAX/XLA" },
		{ "numba", "Numba" },         { "torch/", "PyTorch" },
		{ "libc10", "PyTorch" },      { "libtorch", "PyTorch" },
		{ "tensorflow", "TensorFlow" }, { "triton", "Triton" },
		/* Python code calling CUDA through ctypes (Numba's driver by
		 * default): libffi makes the call, the package is not on the
		 * native stack */
		{ "libffi", "ctypes" },       { "_ctypes", "ctypes" },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strstr(caller, known[i].part))
			return known[i].library;
	return NULL;
}

/* The alloc event's caller as an index + 1 into s->libraries (0: none
 * named, past AN_MAX_LIBRARIES). */
static int caller_library(struct an_source *s, const struct gp_json_val *v, uint64_t *out,
			  char *err, size_t errcap)
{
	struct an_str *caller, *lib;
	int r;

	*out = 0;
	if ((r = get_str(s, v, GP_F_CALLER, 1, &caller, err, errcap)))
		return r;
	const char *known = library_of(caller->s);
	if (known) {
		lib = an_str_intern(s->st, known, strlen(known));
		an_str_unref(s->st, caller);
	} else {
		/* unknown: its file name, without the directories */
		const char *base = strrchr(caller->s, '/');
		lib = base ? an_str_intern(s->st, base + 1, strlen(base + 1)) : caller;
		if (base)
			an_str_unref(s->st, caller);
	}
	if (!lib)
		return oom_err(s, err, errcap);
	for (unsigned i = 0; i < s->nlibraries; i++) {
		if (s->libraries[i] == lib) {
			an_str_unref(s->st, lib);
			*out = i + 1;
			return 0;
		}
	}
	if (s->nlibraries == AN_MAX_LIBRARIES) {
		an_str_unref(s->st, lib);
		return 0;
	}
	s->libraries[s->nlibraries++] = lib;
	*out = s->nlibraries;
	return 0;
}

static int on_oom(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	struct an_ev ev = { .type = AE_OOM, .ts = ts };
	uint64_t dev = 0;
	int64_t res = 0;
	int r;

	if ((r = need_i64(s, &s->line.top[TK_TID], GP_T_TID, &ev.tid, err, errcap)) ||
	    (r = need_u64(s, &a[AK_BYTES], GP_F_BYTES, UINT64_MAX, &ev.oom.requested, err, errcap)))
		return r;
	if (a[AK_DEVICE].type != GP_JSON_NONE &&
	    (r = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)))
		return r;
	ev.device = (uint32_t)dev;
	if (a[AK_FREE].type != GP_JSON_NONE && a[AK_TOTAL].type != GP_JSON_NONE) {
		if ((r = need_u64(s, &a[AK_FREE], GP_F_FREE, AN_MAX_BYTES, &ev.oom.free, err,
				  errcap)) ||
		    (r = need_u64(s, &a[AK_TOTAL], GP_F_TOTAL, AN_MAX_BYTES, &ev.oom.total, err,
				  errcap)))
			return r;
		ev.flags |= EVF_MEMINFO;
	}
	if (a[AK_RESULT].type != GP_JSON_NONE &&
	    (r = need_i64(s, &a[AK_RESULT], GP_F_RESULT, &res, err, errcap)))
		return r;
	ev.oom.result = res;
	if ((r = get_str(s, &a[AK_API], GP_F_API, 0, &ev.name, err, errcap)))
		return r;
	return push(s, &ev, err, errcap);
}

/* ---- PyTorch's caching allocator, from gpuprof's hook (torch.* events) ---- */

/* What its blocks give as their API: one name per trace. */
static int torch_api(struct an_source *s, struct an_str **out, char *err, size_t errcap)
{
	static const char name[] = "PyTorch caching allocator";

	if (!s->torch_api && !(s->torch_api = an_str_intern(s->st, name, sizeof(name) - 1)))
		return oom_err(s, err, errcap);
	*out = an_str_ref(s->torch_api);
	return 0;
}

static int need_addr(struct an_source *s, const struct gp_json_val *v, uint64_t *out, char *err,
		     size_t errcap)
{
	if (gp_jv_hex(v, out))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"addr\" is %s", ev_what(&s->line),
			   v->type == GP_JSON_NONE ? "missing" : "not an address (\"0x...\")");
	return 0;
}

static int on_torch_block(struct an_source *s, int type, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	struct an_ev ev = { .type = (uint8_t)type, .ts = ts, .kind = K_DEVICE,
			    .flags = EVF_TORCH | EVF_THREAD };
	uint64_t dev;
	int r, b;

	if ((r = need_i64(s, &s->line.top[TK_TID], GP_T_TID, &ev.tid, err, errcap)) ||
	    (r = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)) ||
	    (r = need_addr(s, &a[AK_ADDR], &ev.mem.addr, err, errcap)) ||
	    (r = need_u64(s, &a[AK_REQUESTED], GP_F_REQUESTED, AN_MAX_BYTES, &ev.mem.requested, err,
			  errcap)))
		return r;
	ev.device = (uint32_t)dev;
	if ((type == AE_ALLOC || a[AK_BYTES].type != GP_JSON_NONE) &&
	    (r = need_u64(s, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev.mem.bytes, err, errcap)))
		return r;
	if (type == AE_ALLOC && a[AK_STACK].type != GP_JSON_NONE &&
	    (r = need_u64(s, &a[AK_STACK], GP_F_STACK, AN_MAX_STACK_ID - 1, &ev.mem.stack, err,
			  errcap)))
		return r;
	if (type == AE_ALLOC && gp_jv_bool(&a[AK_GUESSED], &b) == 0 && b)
		s->torch_guessed++;
	if ((r = torch_api(s, &ev.name, err, errcap)))
		return r;
	return push(s, &ev, err, errcap);
}

static int on_torch_segment(struct an_source *s, int release, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	struct an_ev ev = { .type = AE_SEGMENT, .ts = ts, .flags = release ? EVF_RELEASE : 0 };
	uint64_t dev;
	int r, mapped;

	if ((r = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)) ||
	    (r = need_addr(s, &a[AK_ADDR], &ev.segment.addr, err, errcap)) ||
	    (r = need_u64(s, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev.segment.bytes, err, errcap)))
		return r;
	if (gp_jv_bool(&a[AK_MAPPED], &mapped))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"mapped\" is not true or false",
			   ev_what(&s->line));
	ev.device = (uint32_t)dev;
	if (mapped)
		ev.flags |= EVF_MAPPED;
	return push(s, &ev, err, errcap);
}

static int on_torch_oom(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	struct an_ev ev = { .type = AE_OOM, .ts = ts, .flags = EVF_TORCH };
	uint64_t dev;
	int r;

	if ((r = need_i64(s, &s->line.top[TK_TID], GP_T_TID, &ev.tid, err, errcap)) ||
	    (r = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)) ||
	    (r = need_u64(s, &a[AK_BYTES], GP_F_BYTES, AN_MAX_BYTES, &ev.oom.requested, err, errcap)) ||
	    (r = need_u64(s, &a[AK_REQUESTED], GP_F_REQUESTED, AN_MAX_BYTES, &ev.oom.torch.block, err,
			  errcap)) ||
	    (r = need_u64(s, &a[AK_FREE], GP_F_FREE, AN_MAX_BYTES, &ev.oom.free, err, errcap)) ||
	    (r = need_u64(s, &a[AK_ALLOCATED], GP_F_ALLOCATED, AN_MAX_BYTES, &ev.oom.torch.allocated,
			  err, errcap)) ||
	    (r = need_u64(s, &a[AK_RESERVED], GP_F_RESERVED, AN_MAX_BYTES, &ev.oom.torch.reserved, err,
			  errcap)))
		return r;
	ev.device = (uint32_t)dev;
	/* the device's size, as for CUDA's own failures */
	if (s->dev[dev].total_memory) {
		ev.oom.total = s->dev[dev].total_memory;
		ev.flags |= EVF_MEMINFO;
	}
	if ((r = torch_api(s, &ev.name, err, errcap)))
		return r;
	return push(s, &ev, err, errcap);
}

static int on_torch_attach(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	struct an_ev ev = { .type = AE_ATTACH, .ts = ts };
	uint64_t dev;
	int r, stacks;

	if ((r = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)) ||
	    (r = need_u64(s, &a[AK_ALLOCATED], GP_F_ALLOCATED, AN_MAX_BYTES, &ev.attach.allocated, err,
			  errcap)) ||
	    (r = need_u64(s, &a[AK_RESERVED], GP_F_RESERVED, AN_MAX_BYTES, &ev.attach.reserved, err,
			  errcap)))
		return r;
	if (gp_jv_bool(&a[AK_STACKS], &stacks))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"stacks\" is not true or false",
			   ev_what(&s->line));
	ev.device = (uint32_t)dev;
	if (stacks)
		ev.flags |= EVF_STACKS;
	return push(s, &ev, err, errcap);
}

/* A stack is kept by the source, not sent as an event: allocations name
 * it by id, and reports read it at the end. */
static int on_torch_stack(struct an_source *s, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	uint64_t id;
	char why[120];
	int r;

	if ((r = need_u64(s, &a[AK_STACK], GP_F_STACK, UINT64_MAX, &id, err, errcap)))
		return r;
	if (a[AK_FRAMES].type != GP_JSON_ARR)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"frames\" is %s", ev_what(&s->line),
			   a[AK_FRAMES].type == GP_JSON_NONE ? "missing" : "not an array");
	r = an_stacks_add(&s->stacks, s->st, id, a[AK_FRAMES].p, a[AK_FRAMES].n, why, sizeof(why));
	if (r == -ENOMEM)
		return oom_err(s, err, errcap);
	if (r)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: %s", ev_what(&s->line), why);
	return 0;
}

/* A mark of PyTorch's allocator history: longer than names may be
 * (AN_STR_MAX), and no event; see history.h. */
static int is_history(const struct gp_json_val *name)
{
	size_t n = sizeof(AN_HIST_PREFIX) - 1;

	return name->type == GP_JSON_STR && name->n > n && !memcmp(name->p, AN_HIST_PREFIX, n);
}

static int on_history(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *v = &s->line.top[TK_NAME];
	size_t plen = sizeof(AN_HIST_PREFIX) - 1, n;
	const char *p;
	char why[160];
	int r;

	s->hist_marks++;
	if (s->hist_given)
		return 0;
	if (unescape(s, v, &p, &n))
		return oom_err(s, err, errcap);
	r = an_history_add(&s->hist, p + plen, n - plen, ts, why, sizeof(why));
	if (r == -ENOMEM)
		return oom_err(s, err, errcap);
	if (r)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "gpuprof:torch.history mark: %s", why);
	return 0;
}

static int on_nvtx(struct an_source *s, char ph, int64_t ts, char *err, size_t errcap)
{
	struct an_ev ev = { .ts = ts };
	int r;

	if ((r = need_i64(s, &s->line.top[TK_TID], GP_T_TID, &ev.tid, err, errcap)))
		return r;
	switch (ph) {
	case 'B': ev.type = AE_PUSH; break;
	case 'E': ev.type = AE_POP; break;
	case 'b': ev.type = AE_START; break;
	case 'e': ev.type = AE_END; break;
	default: ev.type = AE_MARK; break;
	}
	if (ev.type == AE_START || ev.type == AE_END) {
		if ((r = need_u64(s, &s->line.top[TK_ID], GP_T_ID, UINT64_MAX, &ev.range.id, err,
				  errcap)))
			return r;
	}
	if (ev.type == AE_MARK && is_history(&s->line.top[TK_NAME]))
		return on_history(s, ts, err, errcap);
	if (ev.type != AE_POP && ev.type != AE_END &&
	    (r = get_str(s, &s->line.top[TK_NAME], GP_T_NAME, 1, &ev.name, err, errcap)))
		return r;
	return push(s, &ev, err, errcap);
}

static int on_api(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *dur_v = &s->line.top[TK_DUR];
	uint64_t corr;
	int64_t tid, dur = 0;
	struct an_str *name;
	int r;

	if (s->line.args[AK_CORR].type == GP_JSON_NONE)
		return 0;
	if ((r = need_u64(s, &s->line.args[AK_CORR], GP_F_CORR, UINT64_MAX, &corr, err, errcap)) ||
	    (r = need_i64(s, &s->line.top[TK_TID], GP_T_TID, &tid, err, errcap)))
		return r;
	if (dur_v->type != GP_JSON_NONE && (gp_jv_us_to_ns(dur_v, &dur) || dur < 0))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"dur\" is not a duration",
			   ev_what(&s->line));
	if ((r = get_str(s, &s->line.top[TK_NAME], GP_T_NAME, 1, &name, err, errcap)))
		return r;
	if (an_corr_put(&s->corr, s->st, corr, tid, ts + dur, name,
			s->ro.have_released ? s->ro.released : INT64_MIN))
		return oom_err(s, err, errcap);
	return 0;
}

/* A collective's kernel (collective.h), on one of this process's GPUs. */
static int on_collective(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_tr_members *l = &s->line;
	struct an_ev ev = { .type = AE_COLL, .ts = ts };
	int64_t pid, stream, dur, device;
	const char *p;
	size_t n;
	int r;

	if ((r = need_i64(s, &l->top[TK_PID], GP_T_PID, &pid, err, errcap)) ||
	    (r = need_i64(s, &l->top[TK_TID], GP_T_TID, &stream, err, errcap)))
		return r;
	if (gp_gpu_pid_device(pid, s->pid, &device) || device >= AN_MAX_DEVICES)
		return say(s, err, errcap, GP_AN_BAD_INPUT,
			   "%s: \"pid\" %" PRId64 " is not a GPU of process %" PRId64, ev_what(l),
			   pid, s->pid);
	if (l->top[TK_DUR].type == GP_JSON_NONE || gp_jv_us_to_ns(&l->top[TK_DUR], &dur) || dur < 0)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"dur\" is not a duration",
			   ev_what(l));
	if (l->args[AK_CORR].type != GP_JSON_NONE &&
	    (r = need_u64(s, &l->args[AK_CORR], GP_F_CORR, UINT64_MAX, &ev.coll.corr, err, errcap)))
		return r;
	if (unescape(s, &l->top[TK_NAME], &p, &n))
		return oom_err(s, err, errcap);
	ev.name = an_str_intern(s->st, p, an_coll_kernel_len(p, n));
	if (!ev.name)
		return oom_err(s, err, errcap);
	ev.device = (uint32_t)device;
	ev.coll.duration = dur;
	ev.coll.stream = stream;
	return push(s, &ev, err, errcap);
}

/* One event line. */
static int on_event(struct an_source *s, char *err, size_t errcap)
{
	const struct gp_tr_members *l = &s->line;
	const struct gp_json_val *name = &l->top[TK_NAME], *cat = &l->top[TK_CAT];
	int64_t ts;
	char ph;
	int r;

	if (l->ignored && s->have_meta) {
		s->ignored++;
		return 0;
	}
	if (l->top[TK_PH].type != GP_JSON_STR || l->top[TK_PH].n != 1)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "event without a one-letter \"ph\"");
	ph = l->top[TK_PH].p[0];
	if (l->top[TK_ARGS].type != GP_JSON_NONE && l->top[TK_ARGS].type != GP_JSON_OBJ)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"args\" is not an object",
			   ev_what(l));
	if (!s->have_meta) {
		if (GP_JV_IS(name, GP_MERGE_EVENT))
			return say(s, err, errcap, GP_AN_BAD_INPUT, GP_MERGE_NOT_A_TRACE);
		if (ph != 'i' || !GP_JV_IS(name, GP_EV_META))
			return say(s, err, errcap, GP_AN_BAD_INPUT,
				   "not a gpuprof trace (the first event is not gpuprof.meta)");
		return on_meta(s, err, errcap);
	}
	switch (ph) {
	case 'i':
		if (GP_JV_IS(cat, GP_CAT_MEMORY)) {
			if ((r = need_ts(s, &ts, err, errcap)))
				return r;
			if (GP_JV_IS(name, GP_EV_ALLOC))
				return on_memory(s, AE_ALLOC, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_FREE))
				return on_memory(s, AE_FREE, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_OOM))
				return on_oom(s, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_POOL_CREATE) || GP_JV_IS(name, GP_EV_POOL_DESTROY) ||
			    GP_JV_IS(name, GP_EV_POOL_TRIM))
				return on_memory(s, AE_POOL, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_TORCH_ALLOC))
				return on_torch_block(s, AE_ALLOC, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_TORCH_FREE))
				return on_torch_block(s, AE_FREE, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_TORCH_SEGMENT_ALLOC))
				return on_torch_segment(s, 0, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_TORCH_SEGMENT_FREE))
				return on_torch_segment(s, 1, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_TORCH_OOM))
				return on_torch_oom(s, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_TORCH_ATTACH))
				return on_torch_attach(s, ts, err, errcap);
			if (GP_JV_IS(name, GP_EV_TORCH_STACK))
				return on_torch_stack(s, err, errcap);
			break;
		}
		if (GP_JV_IS(cat, GP_CAT_NVTX)) {
			if ((r = need_ts(s, &ts, err, errcap)))
				return r;
			return on_nvtx(s, ph, ts, err, errcap);
		}
		if (own_event(name)) {
			if (GP_JV_IS(name, GP_EV_WATERMARK)) {
				if ((r = need_ts(s, &ts, err, errcap)))
					return r;
				an_reorder_watermark(&s->ro, ts);
				return 0;
			}
			if (GP_JV_IS(name, GP_EV_DEVICE))
				return on_device(s, err, errcap);
			if (GP_JV_IS(name, GP_EV_END))
				return on_end(s);
			if (GP_JV_IS(name, GP_EV_DROPPED)) {
				uint64_t n = 0;

				opt_u64(&l->args[AK_COUNT], &n);
				s->dropped_marks += n;
				return 0;
			}
			if (GP_JV_IS(name, GP_EV_META))
				return say(s, err, errcap, GP_AN_BAD_INPUT,
					   "a second gpuprof.meta: traces joined into one file?");
		}
		break;
	case 'B':
	case 'E':
	case 'b':
	case 'e':
		if (GP_JV_IS(cat, GP_CAT_NVTX)) {
			if ((r = need_ts(s, &ts, err, errcap)))
				return r;
			return on_nvtx(s, ph, ts, err, errcap);
		}
		break;
	case 'X':
		if (GP_JV_IS(cat, GP_CAT_CUDA_RUNTIME) || GP_JV_IS(cat, GP_CAT_CUDA_DRIVER)) {
			if ((r = need_ts(s, &ts, err, errcap)))
				return r;
			return on_api(s, ts, err, errcap);
		}
		if (GP_JV_IS(cat, GP_CAT_KERNEL) && name->type == GP_JSON_STR &&
		    gp_tr_is_coll_kernel((const char *)name->p, name->n)) {
			if ((r = need_ts(s, &ts, err, errcap)))
				return r;
			return on_collective(s, ts, err, errcap);
		}
		break;
	default:
		break;
	}
	s->ignored++;
	return 0;
}

static int input_error(struct an_source *s, int r, char *err, size_t errcap)
{
	if (r == -EFBIG)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "line longer than %u MiB: not a gpuprof trace",
			   GP_TR_MAX_LINE >> 20);
	if (r == -ENOMEM)
		return oom_err(s, err, errcap);
	snprintf(err, errcap, "%s: read error: %s", s->path,
		 strerror(gp_tr_state(s->in)->io_errno ? gp_tr_state(s->in)->io_errno : EIO));
	return -GP_AN_FAIL;
}

/* Reads one line and acts on it. 1: something was read, 0: end of input. */
static int read_line(struct an_source *s, char *err, size_t errcap)
{
	const char *p, *why = NULL;
	size_t n;
	int r = gp_tr_line(s->in, &p, &n);

	if (r < 0)
		return input_error(s, r, err, errcap);
	if (r == 0)
		return 0;
	gp_tr_line_trim(&p, &n);
	if (n == 0)
		return 1;
	if (!s->started) {
		if (n != 1 || p[0] != '[') {
			if (gp_tr_state(s->in)->gzip_damaged && gp_tr_state(s->in)->line_no <= 1)
				return say(s, err, errcap, GP_AN_BAD_INPUT,
					   "not a gpuprof trace (damaged gzip data)");
			return say(s, err, errcap, GP_AN_BAD_INPUT,
				   "not a gpuprof trace (it should begin with a line holding '[')");
		}
		s->started = 1;
		return 1;
	}
	if (s->closed)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "text after the closing ']'");
	if (n == 1 && p[0] == ']') {
		s->closed = 1;
		return 1;
	}
	/* scanned on a worker already, or here */
	if (gp_tr_scanned(s->in, p, n, &s->line) != 1 && gp_tr_scan_line(p, n, &s->line, &why) != 0) {
		/* the last line of a trace cut short is usually half a line */
		if (gp_tr_state(s->in)->last_unterminated && s->have_meta) {
			s->cut_line_bytes = n;
			return 1;
		}
		return say(s, err, errcap, GP_AN_BAD_INPUT, "not a gpuprof trace (bad JSON: %s)", why);
	}
	s->events++;
	r = on_event(s, err, errcap);
	return r < 0 ? r : 1;
}

int an_source_open(struct an_source *s, const struct gp_an_input *inp, struct an_strtab *st,
		   char *err, size_t errcap)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->path = inp->path ? inp->path : "(memory)";
	s->st = st;
	s->last_ts = INT64_MIN;
	s->end_ts = INT64_MIN;
	an_reorder_init(&s->ro);
	an_corr_init(&s->corr);
	r = inp->mem ? gp_tr_open_mem(&s->in, inp->mem, inp->len)
		     : gp_tr_open_file(&s->in, inp->path);
	if (!r)
		gp_tr_set_scan(s->in, 1);
	if (r == -ENOMEM) {
		snprintf(err, errcap, "%s: out of memory", s->path);
		return GP_AN_FAIL;
	}
	if (r) {
		snprintf(err, errcap, "%s: %s", s->path, gp_in_strerror(r));
		/* a name that is no readable file is a bad argument, as for recover */
		return r == -ENOENT || r == -EACCES || r == -EISDIR || r == -ENOTDIR ||
		       r == -ELOOP || r == -ENAMETOOLONG || r == -EINVAL ? GP_AN_BAD_INPUT
									 : GP_AN_FAIL;
	}
	while (!s->have_meta) {
		r = read_line(s, err, errcap);
		if (r < 0)
			return -r;
		if (r == 0) {
			const struct gp_tr_state *rs = gp_tr_state(s->in);

			if (rs->gzip_damaged || rs->gzip_cut)
				snprintf(err, errcap, "%s: not a gpuprof trace (%s gzip data, no events)",
					 s->path, rs->gzip_damaged ? "damaged" : "truncated");
			else if (!s->started)
				snprintf(err, errcap, "%s: not a gpuprof trace (%s)", s->path,
					 rs->line_no ? "no '[' line" : "empty file");
			else
				snprintf(err, errcap, "%s: not a gpuprof trace (no gpuprof.meta event)",
					 s->path);
			return GP_AN_BAD_INPUT;
		}
	}
	/* a gpuprof trace: events no analysis uses need not be read whole */
	s->line.skip_ignored = 1;
	return 0;
}

int an_source_next(struct an_source *s, struct an_ev *ev, char *err, size_t errcap)
{
	for (;;) {
		int r;

		if (an_reorder_pop(&s->ro, s->eof, ev)) {
			/* the event may look up its API call */
			if (s->corr.nqueue && an_corr_flush(&s->corr, s->st)) {
				an_str_unref(s->st, ev->name);
				return oom_err(s, err, errcap);
			}
			return 1;
		}
		if (s->eof)
			return 0;
		r = read_line(s, err, errcap);
		if (r < 0)
			return r;
		if (r == 0) {
			s->eof = 1;
			s->cut_short = !s->closed || !s->have_end;
		}
	}
}

void an_source_close(struct an_source *s)
{
	struct an_ev ev;

	while (an_reorder_pop(&s->ro, 1, &ev))
		an_str_unref(s->st, ev.name);
	an_reorder_free(&s->ro);
	an_corr_free(&s->corr, s->st);
	gp_tr_close(s->in);
	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		an_str_unref(s->st, s->dev[d].name);
		an_str_unref(s->st, s->dev[d].uuid);
	}
	for (size_t i = 0; i < sizeof(s->recent) / sizeof(s->recent[0]); i++)
		an_str_unref(s->st, s->recent[i]);
	for (unsigned i = 0; i < s->nlibraries; i++)
		an_str_unref(s->st, s->libraries[i]);
	s->nlibraries = 0;
	an_str_unref(s->st, s->cmdline);
	an_str_unref(s->st, s->hostname);
	an_str_unref(s->st, s->version);
	an_str_unref(s->st, s->torch_api);
	an_stacks_free(&s->stacks, s->st);
	an_history_free(&s->hist);
	free(s->scratch);
	memset(s, 0, sizeof(*s));
}
