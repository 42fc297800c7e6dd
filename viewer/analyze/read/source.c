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
#include "exporters/trace_meta.h"

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

/* What a message calls the event of the members in s->line (decode.h). */
static const char *ev_what(struct an_source *s)
{
	return an_ev_what(&s->line, s->what);
}

/* Reads a required member of s->line; on failure says which and why
 * (decode.c's check). */
static int need_u64(struct an_source *s, const struct gp_json_val *v, const char *key, uint64_t max,
		    uint64_t *out, char *err, size_t errcap)
{
	char why[200];

	if (an_need_u64(&s->line, v, key, max, out, why, sizeof(why)))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s", why);
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

/* The string v, interned: a reference in *out. */
static int intern_str(struct an_source *s, const struct gp_json_val *v, struct an_str **out,
		      char *err, size_t errcap)
{
	const char *p;
	size_t n;

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

/* The string value of v, interned; *out NULL when v is absent and !required. */
static int get_str(struct an_source *s, const struct gp_json_val *v, const char *key, int required,
		   struct an_str **out, char *err, size_t errcap)
{
	char why[200];
	int r = an_check_str(&s->line, v, key, required, why, sizeof(why));

	*out = NULL;
	if (r < 0)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s", why);
	return r ? intern_str(s, v, out, err, errcap) : 0;
}

/* The meta's checks and values are the trace library's (trace_meta.h). */
static int on_meta(struct an_source *s, char *err, size_t errcap)
{
	struct gp_tr_meta m;
	char why[200];
	int r;

	if (gp_tr_meta_decode(&s->line, &m, why, sizeof(why)))
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s", why);
	s->pid = m.pid;
	s->ts_base_ns = m.ts_base_ns;
	if (m.has_start_unix_ns)
		s->start_unix_ns = (uint64_t)m.start_unix_ns;
	s->rank = m.rank;
	s->world_size = m.world_size;
	s->local_rank = m.local_rank;
	s->local_world_size = m.local_world_size;
	if (m.has_job_start_unix_ns)
		s->job_start_unix_ns = (uint64_t)m.job_start_unix_ns;
	if ((r = get_str(s, &m.cmdline_val, GP_F_CMDLINE, 0, &s->cmdline, err, errcap)) ||
	    (r = get_str(s, &m.hostname_val, GP_F_HOSTNAME, 0, &s->hostname, err, errcap)) ||
	    (r = get_str(s, &m.version_val, GP_F_VERSION, 0, &s->version, err, errcap)))
		return r;
	s->mode = MODE_CUDA;
	if (GP_JV_IS(&m.mode_val, "tensor"))
		s->mode = MODE_TENSOR;
	else if (GP_JV_IS(&m.mode_val, "native"))
		s->mode = MODE_NATIVE;
	s->statics = m.statics_none ? STATICS_NONE : STATICS_RUN;
	/* older traces may place module globals on device 0 (analyze.c) */
	s->memory_by_context = m.memory_by_context;
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
	if (s->held_n)
		s->held_dev = 1;
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

/* A segment PyTorch made of a cudaMalloc of its own (not given back, not
 * pages of an expandable one). */
static int seg_made(const struct an_ev *ev)
{
	return ev->type == AE_SEGMENT && !(ev->flags & (EVF_RELEASE | EVF_MAPPED));
}

static int push(struct an_source *s, struct an_ev *ev, char *err, size_t errcap)
{
	if (ev->ts > s->last_ts)
		s->last_ts = ev->ts;
	if (an_ev_from_hook(ev))
		s->hook_seen = 1;
	if (seg_made(ev)) {
		uintptr_t n = (uintptr_t)gp_u64map_get(&s->seg_ahead, ev->segment.addr);

		if (gp_u64map_put(&s->seg_ahead, ev->segment.addr, (void *)(n + 1))) {
			an_str_unref(s->st, ev->name);
			return oom_err(s, err, errcap);
		}
	}
	if (an_reorder_push(&s->ro, ev) != 0) {
		an_str_unref(s->st, ev->name);
		return oom_err(s, err, errcap);
	}
	return 0;
}

/* ev leaves the window: a segment's count of those ahead comes down; a
 * CUDA allocation at a segment still ahead (it comes later in time, read
 * already) is marked. */
static void seg_ahead_left(struct an_source *s, struct an_ev *ev)
{
	uintptr_t n;

	if (seg_made(ev)) {
		n = (uintptr_t)gp_u64map_del(&s->seg_ahead, ev->segment.addr);
		/* put back where it was taken: the map needs no more room */
		if (n > 1)
			(void)gp_u64map_put(&s->seg_ahead, ev->segment.addr, (void *)(n - 1));
	} else if (ev->type == AE_ALLOC && !(ev->flags & EVF_TORCH) &&
		   gp_u64map_get(&s->seg_ahead, ev->mem.addr)) {
		ev->flags |= EVF_SEG_CUDA;
	}
}

static int caller_library(struct an_source *s, const struct gp_json_val *v, uint64_t *out,
			  char *err, size_t errcap);

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
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"frames\" is %s", ev_what(s),
			   a[AK_FRAMES].type == GP_JSON_NONE ? "missing" : "not an array");
	r = an_stacks_add(&s->stacks, s->st, id, a[AK_FRAMES].p, a[AK_FRAMES].n, why, sizeof(why));
	if (r == -ENOMEM)
		return oom_err(s, err, errcap);
	if (r)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: %s", ev_what(s), why);
	return 0;
}

/* A gpuprof.outline (TRACE_FORMAT.md, "Flight recorder"): every member
 * checked, kept per device (outline.h). Times past this are no trace's
 * (a year, as ts's own bound keeps them from overflowing) */
#define GP_OUTLINE_MAX_NS (366ll * 86400 * 1000000000)
/* gpuprof.cap: one, with a start file's name and a cap */
static int on_cap(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;

	if (s->has_cap)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: a second gpuprof.cap", ev_what(s));
	if (gp_jv_u64(&a[AK_CAP_BYTES], &s->cap_bytes) != 0 || a[AK_START].type != GP_JSON_STR ||
	    !a[AK_START].n || memchr(a[AK_START].p, '/', a[AK_START].n))
		return say(s, err, errcap, GP_AN_BAD_INPUT,
			   "%s: gpuprof.cap needs \"cap_bytes\" (bytes) and \"start\" (a file name)", ev_what(s));
	s->has_cap = 1;
	s->cap_ts = s->ts_base_ns + ts;
	return intern_str(s, &a[AK_START], &s->cap_start, err, errcap);
}

static int on_outline(struct an_source *s, int64_t ts, char *err, size_t errcap)
{
	const struct gp_json_val *a = s->line.args;
	struct an_outline_rec r = { 0 };
	uint64_t dev;
	char why[160];
	int i, k;
	static const char *const closed[3] = { "step", "second", "end" };
	struct {
		int key;
		const char *name;
		uint64_t *out;
	} const u[] = {
		{ AK_STEP, GP_F_STEP, &r.step },
		{ AK_ALLOCATED_PEAK, GP_F_ALLOCATED_PEAK, &r.allocated_peak },
		{ AK_RESERVED_PEAK, GP_F_RESERVED_PEAK, &r.reserved_peak },
		{ AK_DEVICE_PEAK, GP_F_DEVICE_PEAK, &r.device_peak },
		{ AK_ALLOCATED, GP_F_ALLOCATED, &r.allocated },
		{ AK_RESERVED, GP_F_RESERVED, &r.reserved },
		{ AK_DEVICE_BYTES, GP_F_DEVICE_BYTES, &r.device_bytes },
		{ AK_LIVE, GP_F_LIVE, &r.live },
		{ AK_OOMS, GP_F_OOMS, &r.ooms },
		{ AK_OOM_BYTES, GP_F_OOM_BYTES, &r.oom_bytes },
		{ AK_DROPPED_SEGMENTS, GP_F_DROPPED_SEGMENTS, &r.dropped_segments },
		{ AK_DROPPED_BYTES, GP_F_DROPPED_BYTES, &r.dropped_bytes },
	};

	if ((k = need_u64(s, &a[AK_DEVICE], GP_F_DEVICE, AN_MAX_DEVICES - 1, &dev, err, errcap)))
		return k;
	r.device = (uint32_t)dev;
	for (i = 0; i < (int)(sizeof(u) / sizeof(u[0])); i++)
		if ((k = need_u64(s, &a[u[i].key], u[i].name, AN_MAX_BYTES, u[i].out, err, errcap)))
			return k;
	for (r.closed_by = 0; r.closed_by < 3; r.closed_by++)
		if (gp_jv_is(&a[AK_CLOSED_BY], closed[r.closed_by], strlen(closed[r.closed_by])))
			break;
	if (r.closed_by == 3 || gp_jv_i64(&a[AK_BEGIN_NS], &r.begin_ns) || gp_jv_i64(&a[AK_PEAK_NS], &r.peak_ns) ||
	    a[AK_BY_CATEGORY].type != GP_JSON_OBJ || a[AK_BY_LAYER].type != GP_JSON_OBJ)
		return say(s, err, errcap, GP_AN_BAD_INPUT,
			   "%s: \"closed_by\", \"begin_ns\", \"peak_ns\", \"by_category\" or \"by_layer\" missing or wrong",
			   ev_what(s));
	r.end_ns = ts;
	if (r.begin_ns > r.end_ns || r.peak_ns < r.begin_ns || r.peak_ns > r.end_ns || r.allocated > r.allocated_peak ||
	    r.begin_ns < -GP_OUTLINE_MAX_NS || r.end_ns > GP_OUTLINE_MAX_NS)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: its times or peak do not hold together",
			   ev_what(s));
	/* kept as the model's times: from the trace's ts_base_ns */
	r.begin_ns += s->ts_base_ns;
	r.peak_ns += s->ts_base_ns;
	r.end_ns += s->ts_base_ns;
	k = an_outline_add(&s->outline, s->st, &r, a[AK_BY_CATEGORY].p, a[AK_BY_CATEGORY].n, a[AK_BY_LAYER].p,
			   a[AK_BY_LAYER].n, why, sizeof(why));
	if (k == -ENOMEM)
		return oom_err(s, err, errcap);
	if (k)
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: %s", ev_what(s), why);
	return 0;
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

/* The event's name, as decoded (decode.h): a reference in *out, or NULL. */
static int dec_name(struct an_source *s, const struct an_dec *d, const char *line,
		    struct an_str **out, char *err, size_t errcap)
{
	struct gp_json_val v = an_slice_val(line, &d->name);
	const char *p;
	size_t n;

	if (d->name_copied)
		v.p = d->name_copy;
	*out = NULL;
	switch (d->name_is) {
	case DN_STR:
		return intern_str(s, &v, out, err, errcap);
	case DN_TORCH_API:
		return torch_api(s, out, err, errcap);
	case DN_COLL_KERNEL:
		if (unescape(s, &v, &p, &n))
			return oom_err(s, err, errcap);
		*out = an_str_intern(s->st, p, an_coll_kernel_len(p, n));
		return *out ? 0 : oom_err(s, err, errcap);
	default:
		return 0;
	}
}

/* A collective's kernel on a GPU of another process: said before anything
 * else wrong with its line (decode.c stops at the first). */
static int coll_elsewhere(struct an_source *s, const struct an_dec *d, const char *line,
			  size_t n, int64_t *device, char *err, size_t errcap)
{
	const char *why;

	if (!gp_gpu_pid_device(d->pid, s->pid, device) && *device < AN_MAX_DEVICES)
		return 0;
	if (gp_tr_scan_line(line, n, &s->line, &why)) /* it scanned before */
		return say(s, err, errcap, GP_AN_BAD_INPUT, "not a gpuprof trace (bad JSON: %s)", why);
	return say(s, err, errcap, GP_AN_BAD_INPUT,
		   "%s: \"pid\" %" PRId64 " is not a GPU of process %" PRId64,
		   ev_what(s), d->pid, s->pid);
}

/* What a line decoded to, applied in file order. s->line holds its members
 * only for DEC_MEMBERS. */
static int apply(struct an_source *s, const struct an_dec *d, const char *line, size_t n,
		 char *err, size_t errcap)
{
	struct an_ev ev;
	struct an_str *name;
	int64_t device = 0;
	int r;

	switch (d->kind) {
	case DEC_IGNORED:
	case DEC_NOTHING:
		return 0;
	case DEC_WATERMARK:
		an_reorder_watermark(&s->ro, d->ev.ts);
		return 0;
	case DEC_API:
		if ((r = dec_name(s, d, line, &name, err, errcap)))
			return r;
		if (an_corr_put(&s->corr, s->st, d->ev.coll.corr, d->ev.tid, d->ev.ts, name,
				s->ro.have_released ? s->ro.released : INT64_MIN))
			return oom_err(s, err, errcap);
		return 0;
	case DEC_MEMBERS:
		switch (d->members) {
		case DM_META:
			return on_meta(s, err, errcap);
		case DM_DEVICE:
			return on_device(s, err, errcap);
		case DM_END:
			return on_end(s);
		case DM_DROPPED: {
			uint64_t count = 0;

			opt_u64(&s->line.args[AK_COUNT], &count);
			s->dropped_marks += count;
			return 0;
		}
		case DM_STACK:
			return on_torch_stack(s, err, errcap);
		case DM_OUTLINE:
			return on_outline(s, d->ev.ts, err, errcap);
		case DM_WINDOW:
			if (!s->has_window) {
				s->has_window = 1;
				s->window_ts = s->ts_base_ns + d->ev.ts;
			}
			return 0;
		case DM_CAP:
			return on_cap(s, d->ev.ts, err, errcap);
		case DM_DUMP: {
			const struct gp_json_val *v = &s->line.args[AK_REASON];

			an_str_unref(s->st, s->dump_reason);
			s->dump_reason = NULL;
			if (v->type != GP_JSON_STR)
				return say(s, err, errcap, GP_AN_BAD_INPUT, "%s: \"reason\" is not a string",
					   ev_what(s));
			return intern_str(s, v, &s->dump_reason, err, errcap);
		}
		default:
			return on_history(s, d->ev.ts, err, errcap);
		}
	default:
		break;
	}
	ev = d->ev;
	if (ev.type == AE_COLL) {
		if ((r = coll_elsewhere(s, d, line, n, &device, err, errcap)))
			return r;
		ev.device = (uint32_t)device;
	}
	if (ev.type == AE_ALLOC && d->has_caller) {
		struct gp_json_val v = an_slice_val(line, &d->caller);

		if ((r = caller_library(s, &v, &ev.mem.library, err, errcap)))
			return r;
	}
	if (d->guessed)
		s->torch_guessed++;
	/* the device's size, as for CUDA's own failures */
	if (ev.type == AE_OOM && (ev.flags & EVF_TORCH) && s->dev[ev.device].total_memory) {
		ev.oom.total = s->dev[ev.device].total_memory;
		ev.flags |= EVF_MEMINFO;
	}
	if ((r = dec_name(s, d, line, &ev.name, err, errcap)))
		return r;
	return push(s, &ev, err, errcap);
}

/* One event line, its members in s->line: decoded here. */
static int on_event(struct an_source *s, const char *line, size_t n, char *err, size_t errcap)
{
	struct an_dec d;
	char why[200];
	int64_t device;
	int r;

	if (an_decode(&s->line, line, !s->have_meta, &d, why, sizeof(why))) {
		if (d.pid_set && (r = coll_elsewhere(s, &d, line, n, &device, err, errcap)))
			return r;
		return say(s, err, errcap, GP_AN_BAD_INPUT, "%s", why);
	}
	return apply(s, &d, line, n, err, errcap);
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
	const void *rec;
	const char *p, *why = NULL;
	size_t n;
	int done;
	int r = gp_tr_next(s->in, &p, &n, &done, &rec);

	if (r < 0)
		return input_error(s, r, err, errcap);
	if (r == 0)
		return 0;
	if (done == GP_TR_RAW)
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
		/* whatever follows is refused, ignored events too */
		gp_tr_set_skip_ignored(s->in, 0);
		return 1;
	}
	/* decoded on a worker already (before the meta, all is checked here) */
	if (s->have_meta && (done == GP_TR_DECODED || done == GP_TR_IGNORED)) {
		s->events++;
		if (done == GP_TR_IGNORED)
			return 1;
		r = apply(s, rec, p, n, err, errcap);
		return r < 0 ? r : 1;
	}
	/* scanned there, or here */
	if (gp_tr_scanned(s->in, p, n, &s->line) != 1 && gp_tr_scan_line(p, n, &s->line, &why) != 0) {
		/* the last line of a trace cut short is usually half a line */
		if (gp_tr_state(s->in)->last_unterminated && s->have_meta) {
			s->cut_line_bytes = n;
			return 1;
		}
		return say(s, err, errcap, GP_AN_BAD_INPUT, "not a gpuprof trace (bad JSON: %s)", why);
	}
	s->events++;
	if (s->have_meta && s->line.ignored)
		return 1; /* as an_decode would say (an event no analysis uses) */
	r = on_event(s, p, n, err, errcap);
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
	if (!r) {
		gp_tr_set_scan(s->in, 1);
		r = gp_tr_set_decoder(s->in, an_decode_rec, sizeof(struct an_dec));
	}
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
	/* a gpuprof trace: events no analysis uses need not be read whole,
	 * nor handed out where the workers found them */
	s->line.skip_ignored = 1;
	gp_tr_set_skip_ignored(s->in, 1);
	return 0;
}

static int next_event(struct an_source *s, struct an_ev *ev, char *err, size_t errcap)
{
	for (;;) {
		int r;

		if (an_reorder_pop(&s->ro, s->eof, ev)) {
			if (s->seg_ahead.count)
				seg_ahead_left(s, ev);
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
			/* the ignored events the reader passed over */
			s->events += gp_tr_state(s->in)->skipped;
		}
	}
}

/* The corr an_source_api() is asked of ev when the analysis takes it
 * (memory.c's call_thread, collective.c), or 0. */
static uint64_t api_key(const struct an_ev *ev)
{
	if ((ev->type == AE_ALLOC || ev->type == AE_FREE) && !(ev->flags & EVF_THREAD))
		return ev->mem.corr;
	return ev->type == AE_COLL ? ev->coll.corr : 0;
}

/* ev (and its name reference) held, with its API call as it is now. */
static int hold(struct an_source *s, const struct an_ev *ev)
{
	struct an_held *h;

	if (s->held_n == s->held_cap) {
		size_t cap = s->held_cap ? s->held_cap * 2 : 1024;

		h = realloc(s->held, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		s->held = h;
		s->held_cap = cap;
	}
	h = &s->held[s->held_n++]; /* held_head is 0 while holding */
	memset(h, 0, sizeof(*h));
	h->ev = *ev;
	h->api.key = api_key(ev);
	if (h->api.key) {
		const struct an_corr_ent *now = an_corr_get(&s->corr, h->api.key);

		if (now) {
			h->api.ent = *now;
			an_str_ref(h->api.ent.api);
		}
	}
	return 0;
}

/* The API call of the held event handed out last, let go. */
static void api_now_drop(struct an_source *s)
{
	an_str_unref(s->st, s->api_now.ent.api);
	memset(&s->api_now, 0, sizeof(s->api_now));
}

void an_source_look_ahead(struct an_source *s, size_t max)
{
	char msg[1024];

	while (!s->hook_seen && !s->held_dev && !s->held_err && s->held_n < max) {
		struct an_ev ev;
		int r = next_event(s, &ev, msg, sizeof(msg));

		if (r > 0 && hold(s, &ev)) {
			an_str_unref(s->st, ev.name);
			r = oom_err(s, msg, sizeof(msg));
		}
		if (r == 0)
			return;
		if (r < 0) {
			s->held_err = r;
			s->held_msg = strdup(msg); /* NULL: said as out of memory */
		}
	}
}

int an_source_next(struct an_source *s, struct an_ev *ev, char *err, size_t errcap)
{
	/* the held event handed out last has been analyzed */
	if (s->api_now.key)
		api_now_drop(s);
	if (s->held_n) {
		const struct an_held *h = &s->held[s->held_head++];

		*ev = h->ev;
		s->api_now = h->api; /* its reference handed over */
		if (--s->held_n == 0)
			s->held_head = 0;
		return 1;
	}
	if (s->held_err) {
		int r = s->held_err;

		if (s->held_msg)
			snprintf(err, errcap, "%s", s->held_msg);
		else
			snprintf(err, errcap, "%s: out of memory", s->path);
		free(s->held_msg);
		s->held_msg = NULL;
		s->held_err = 0;
		return r;
	}
	return next_event(s, ev, err, errcap);
}

void an_source_close(struct an_source *s)
{
	struct an_ev ev;

	while (an_reorder_pop(&s->ro, 1, &ev))
		an_str_unref(s->st, ev.name);
	while (s->held_n) {
		an_str_unref(s->st, s->held[s->held_head].ev.name);
		an_str_unref(s->st, s->held[s->held_head++].api.ent.api);
		s->held_n--;
	}
	free(s->held);
	api_now_drop(s);
	free(s->held_msg);
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
	an_outline_free(&s->outline, s->st);
	an_str_unref(s->st, s->dump_reason);
	an_str_unref(s->st, s->cap_start);
	an_history_free(&s->hist);
	gp_u64map_free(&s->seg_ahead);
	free(s->scratch);
	memset(s, 0, sizeof(*s));
}
