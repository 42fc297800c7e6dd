/* NVTX injection: the program's NVTX calls come straight here.
 *
 * Pointing NVTX_INJECTION64_PATH at libcupti was measured to deliver 0 ranges
 * from PyTorch, so gpuprof is the NVTX tool itself: NVTX's loader finds
 * InitializeInjectionNvtx2 in this library (the launcher sets
 * NVTX_INJECTION64_PATH to it) and we fill NVTX's callback tables, as Nsight
 * Systems does. A process may hold several NVTX copies (PyTorch has two):
 * each calls this entry point with its own tables, and all are filled.
 * Each callback copies its strings and hands an event to host_events.c. */
#include "nvtx_inject.h"

#include "config.h"
#include "export.h"
#include "host_events.h"
#include "state.h"
#include "torch_marks.h"

/* Types and callback ids only: the NVTX loader implementation belongs to the
 * program, not to its tool. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static __thread int depth; /* push/pop nesting of this thread, all domains */
/* The depth (1-based) of the thread's outermost open module forward range
 * (GP_TORCH_FWD_PREFIX, pushed by gpuprof's PyTorch hooks with
 * nvtxRangePushA), 0 outside any: the allocator hook reads a block's Python
 * stack only where no module names it (gp_nvtx_in_module). */
static __thread int module_from;

int gp_nvtx_in_module(void)
{
	return module_from != 0;
}

static int accepting(void)
{
	int s = atomic_load_explicit(&gp_rec.state, memory_order_acquire);
	/* Ranges opened before CUDA starts are kept for the trace. */
	if (s == GP_REC_OFF)
		return 1;
	/* gpuprof_bench_record() may have turned NVTX off for a while */
	return s == GP_REC_RUNNING && (gp_rec_live() & GP_REC_NVTX);
}

/* UTF-32 (wchar_t on Linux) to UTF-8 into out (cap bytes); returns length.
 * Invalid code points become U+FFFD. */
static size_t wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
	size_t n = 0;
	for (; w && *w && n + 4 <= cap; w++) {
		uint32_t c = (uint32_t)*w;
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			c = 0xFFFD;
		if (c < 0x80) {
			out[n++] = (char)c;
		} else if (c < 0x800) {
			out[n++] = (char)(0xC0 | (c >> 6));
			out[n++] = (char)(0x80 | (c & 0x3F));
		} else if (c < 0x10000) {
			out[n++] = (char)(0xE0 | (c >> 12));
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
			out[n++] = (char)(0x80 | (c & 0x3F));
		} else {
			out[n++] = (char)(0xF0 | (c >> 18));
			out[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
			out[n++] = (char)(0x80 | (c & 0x3F));
		}
	}
	return n;
}

/* A registered string handle points to one of these. */
struct reg_string {
	size_t len;
	char text[];
};

static struct reg_string *make_reg_string(const char *s, size_t n)
{
	struct reg_string *r = malloc(sizeof(*r) + n + 1);
	if (!r)
		return NULL;
	r->len = n;
	memcpy(r->text, s, n);
	r->text[n] = '\0';
	return r;
}

static void queue(uint8_t type, nvtxDomainHandle_t domain, const char *name, size_t n,
		  uint64_t id, const nvtxEventAttributes_t *attr)
{
	struct gp_host_ev ev;
	memset(&ev, 0, sizeof(ev));
	ev.ts = gp_now();
	ev.type = type;
	ev.tid = gp_gettid();
	ev.id = id;
	ev.domain = (uint64_t)(uintptr_t)domain;
	if (attr && attr->size >= NVTX_EVENT_ATTRIB_STRUCT_SIZE) {
		if (attr->category) {
			ev.category = attr->category;
			ev.flags |= GP_HEVF_HAS_CATEGORY;
		}
		if (attr->colorType == NVTX_COLOR_ARGB) {
			ev.color = attr->color;
			ev.flags |= GP_HEVF_HAS_COLOR;
		}
		switch (attr->payloadType) {
		case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
			ev.a = attr->payload.ullValue;
			ev.flags |= GP_HEVF_HAS_PAYLOAD;
			break;
		case NVTX_PAYLOAD_TYPE_INT64:
			ev.a = (uint64_t)attr->payload.llValue;
			ev.flags |= GP_HEVF_HAS_PAYLOAD | GP_HEVF_PAYLOAD_SIGNED;
			break;
		case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
			ev.a = attr->payload.uiValue;
			ev.flags |= GP_HEVF_HAS_PAYLOAD;
			break;
		case NVTX_PAYLOAD_TYPE_INT32:
			ev.a = (uint64_t)(int64_t)attr->payload.iValue;
			ev.flags |= GP_HEVF_HAS_PAYLOAD | GP_HEVF_PAYLOAD_SIGNED;
			break;
		case NVTX_PAYLOAD_TYPE_DOUBLE: {
			double d = attr->payload.dValue;
			memcpy(&ev.a, &d, sizeof(d));
			ev.flags |= GP_HEVF_HAS_PAYLOAD | GP_HEVF_PAYLOAD_DOUBLE;
			break;
		}
		case NVTX_PAYLOAD_TYPE_FLOAT: {
			double d = attr->payload.fValue;
			memcpy(&ev.a, &d, sizeof(d));
			ev.flags |= GP_HEVF_HAS_PAYLOAD | GP_HEVF_PAYLOAD_DOUBLE;
			break;
		}
		default:
			break;
		}
	}
	gp_hev_push(&ev, name, n);
}

/* The message of an attribute struct, as UTF-8. buf holds converted wide text. */
static const char *attr_message(const nvtxEventAttributes_t *attr, char *buf, size_t cap,
				size_t *n)
{
	*n = 0;
	if (!attr || attr->size < NVTX_EVENT_ATTRIB_STRUCT_SIZE)
		return NULL;
	switch (attr->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		if (!attr->message.ascii)
			return NULL;
		*n = strlen(attr->message.ascii);
		return attr->message.ascii;
	case NVTX_MESSAGE_TYPE_UNICODE:
		*n = wide_to_utf8(attr->message.unicode, buf, cap);
		return buf;
	case NVTX_MESSAGE_TYPE_REGISTERED: {
		const struct reg_string *r = (const void *)attr->message.registered;
		if (!r)
			return NULL;
		*n = r->len;
		return r->text;
	}
	default:
		return NULL;
	}
}

#define WBUF 1024

static void ev_attr(uint8_t type, nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, uint64_t id)
{
	char buf[WBUF];
	size_t n;
	const char *m = attr_message(a, buf, sizeof(buf), &n);
	queue(type, d, m, n, id, a);
}

static void ev_ascii(uint8_t type, const char *m, uint64_t id)
{
	queue(type, NULL, m, m ? strlen(m) : 0, id, NULL);
}

static void ev_wide(uint8_t type, const wchar_t *m, uint64_t id)
{
	char buf[WBUF];
	size_t n = wide_to_utf8(m, buf, sizeof(buf));
	queue(type, NULL, buf, n, id, NULL);
}

static _Atomic uint64_t next_range_id = 1;

static uint64_t new_range_id(void)
{
	return atomic_fetch_add(&next_range_id, 1);
}

/* ---- core module ---- */
static void mark_ex(const nvtxEventAttributes_t *a) { if (accepting()) ev_attr(GP_HEV_MARK, NULL, a, 0); }
static void mark_a(const char *m) { if (accepting()) ev_ascii(GP_HEV_MARK, m, 0); }
static void mark_w(const wchar_t *m) { if (accepting()) ev_wide(GP_HEV_MARK, m, 0); }

static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
	uint64_t id = new_range_id();
	if (accepting())
		ev_attr(GP_HEV_START, NULL, a, id);
	return id;
}
static nvtxRangeId_t start_a(const char *m)
{
	uint64_t id = new_range_id();
	if (accepting())
		ev_ascii(GP_HEV_START, m, id);
	return id;
}
static nvtxRangeId_t start_w(const wchar_t *m)
{
	uint64_t id = new_range_id();
	if (accepting())
		ev_wide(GP_HEV_START, m, id);
	return id;
}
static void range_end(nvtxRangeId_t id) { if (accepting()) queue(GP_HEV_END, NULL, NULL, 0, id, NULL); }

static int push_ex(const nvtxEventAttributes_t *a)
{
	if (accepting())
		ev_attr(GP_HEV_PUSH, NULL, a, 0);
	return depth++;
}
static int push_a(const char *m)
{
	if (accepting())
		ev_ascii(GP_HEV_PUSH, m, 0);
	if (!module_from && m && !strncmp(m, GP_TORCH_FWD_PREFIX, GP_TORCH_RANGE_PREFIX_LEN))
		module_from = depth + 1;
	return depth++;
}
static int push_w(const wchar_t *m)
{
	if (accepting())
		ev_wide(GP_HEV_PUSH, m, 0);
	return depth++;
}
static int pop(void)
{
	if (depth == 0)
		return -1; /* unbalanced pop: NVTX's documented error value */
	if (accepting())
		queue(GP_HEV_POP, NULL, NULL, 0, 0, NULL);
	if (depth == module_from)
		module_from = 0;
	return --depth;
}

static void name_category_a(uint32_t c, const char *n) { (void)c; (void)n; }
static void name_category_w(uint32_t c, const wchar_t *n) { (void)c; (void)n; }

static void name_thread_a(uint32_t tid, const char *n)
{
	if (!accepting() || !n)
		return;
	struct gp_host_ev ev;
	memset(&ev, 0, sizeof(ev));
	ev.ts = gp_now();
	ev.type = GP_HEV_THREAD_NAME;
	ev.tid = tid;
	gp_hev_push(&ev, n, strlen(n));
}
static void name_thread_w(uint32_t tid, const wchar_t *n)
{
	char buf[WBUF];
	size_t len = wide_to_utf8(n, buf, sizeof(buf) - 1);
	buf[len] = '\0';
	name_thread_a(tid, buf);
}

/* ---- core2 module: domains ---- */
static void d_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	if (accepting())
		ev_attr(GP_HEV_MARK, d, a, 0);
}
static nvtxRangeId_t d_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	uint64_t id = new_range_id();
	if (accepting())
		ev_attr(GP_HEV_START, d, a, id);
	return id;
}
static void d_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	if (accepting())
		queue(GP_HEV_END, d, NULL, 0, id, NULL);
}
static int d_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	if (accepting())
		ev_attr(GP_HEV_PUSH, d, a, 0);
	return depth++;
}
static int d_pop(nvtxDomainHandle_t d)
{
	if (depth == 0)
		return -1;
	if (accepting())
		queue(GP_HEV_POP, d, NULL, 0, 0, NULL);
	if (depth == module_from)
		module_from = 0;
	return --depth;
}
static nvtxResourceHandle_t d_resource_create(nvtxDomainHandle_t d, nvtxResourceAttributes_t *a)
{
	(void)d;
	(void)a;
	/* Resources name objects; nothing in gpuprof uses them yet. A non-NULL
	 * handle keeps programs that check it happy. */
	static char token;
	return (nvtxResourceHandle_t)(void *)&token;
}
static void d_resource_destroy(nvtxResourceHandle_t r) { (void)r; }
static void d_name_category_a(nvtxDomainHandle_t d, uint32_t c, const char *n) { (void)d; (void)c; (void)n; }
static void d_name_category_w(nvtxDomainHandle_t d, uint32_t c, const wchar_t *n) { (void)d; (void)c; (void)n; }

static nvtxStringHandle_t d_register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	if (!s)
		return NULL;
	return (nvtxStringHandle_t)(void *)make_reg_string(s, strlen(s));
}
static nvtxStringHandle_t d_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	char buf[WBUF];
	(void)d;
	if (!s)
		return NULL;
	size_t n = wide_to_utf8(s, buf, sizeof(buf));
	return (nvtxStringHandle_t)(void *)make_reg_string(buf, n);
}
static nvtxDomainHandle_t d_create_a(const char *name)
{
	struct gp_nvtx_domain *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->name = strdup(name ? name : "");
	if (!d->name) {
		free(d);
		return NULL;
	}
	return (nvtxDomainHandle_t)(void *)d;
}
static nvtxDomainHandle_t d_create_w(const wchar_t *name)
{
	char buf[WBUF];
	size_t n = wide_to_utf8(name, buf, sizeof(buf) - 1);
	buf[n] = '\0';
	return d_create_a(buf);
}
static void d_destroy(nvtxDomainHandle_t d) { (void)d; /* kept: see nvtx_inject.h */ }
static void initialize(const void *reserved) { (void)reserved; }

struct slot {
	unsigned id;
	NvtxFunctionPointer fn;
};

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))
static const struct slot core_slots[] = {
	{ NVTX_CBID_CORE_MarkEx, FN(mark_ex) },
	{ NVTX_CBID_CORE_MarkA, FN(mark_a) },
	{ NVTX_CBID_CORE_MarkW, FN(mark_w) },
	{ NVTX_CBID_CORE_RangeStartEx, FN(start_ex) },
	{ NVTX_CBID_CORE_RangeStartA, FN(start_a) },
	{ NVTX_CBID_CORE_RangeStartW, FN(start_w) },
	{ NVTX_CBID_CORE_RangeEnd, FN(range_end) },
	{ NVTX_CBID_CORE_RangePushEx, FN(push_ex) },
	{ NVTX_CBID_CORE_RangePushA, FN(push_a) },
	{ NVTX_CBID_CORE_RangePushW, FN(push_w) },
	{ NVTX_CBID_CORE_RangePop, FN(pop) },
	{ NVTX_CBID_CORE_NameCategoryA, FN(name_category_a) },
	{ NVTX_CBID_CORE_NameCategoryW, FN(name_category_w) },
	{ NVTX_CBID_CORE_NameOsThreadA, FN(name_thread_a) },
	{ NVTX_CBID_CORE_NameOsThreadW, FN(name_thread_w) },
};
static const struct slot core2_slots[] = {
	{ NVTX_CBID_CORE2_DomainMarkEx, FN(d_mark_ex) },
	{ NVTX_CBID_CORE2_DomainRangeStartEx, FN(d_start_ex) },
	{ NVTX_CBID_CORE2_DomainRangeEnd, FN(d_end) },
	{ NVTX_CBID_CORE2_DomainRangePushEx, FN(d_push_ex) },
	{ NVTX_CBID_CORE2_DomainRangePop, FN(d_pop) },
	{ NVTX_CBID_CORE2_DomainResourceCreate, FN(d_resource_create) },
	{ NVTX_CBID_CORE2_DomainResourceDestroy, FN(d_resource_destroy) },
	{ NVTX_CBID_CORE2_DomainNameCategoryA, FN(d_name_category_a) },
	{ NVTX_CBID_CORE2_DomainNameCategoryW, FN(d_name_category_w) },
	{ NVTX_CBID_CORE2_DomainRegisterStringA, FN(d_register_a) },
	{ NVTX_CBID_CORE2_DomainRegisterStringW, FN(d_register_w) },
	{ NVTX_CBID_CORE2_DomainCreateA, FN(d_create_a) },
	{ NVTX_CBID_CORE2_DomainCreateW, FN(d_create_w) },
	{ NVTX_CBID_CORE2_DomainDestroy, FN(d_destroy) },
	{ NVTX_CBID_CORE2_Initialize, FN(initialize) },
};

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
		const struct slot *slots, size_t nslots)
{
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return 0;
	for (size_t i = 0; i < nslots; i++) {
		if (slots[i].id < size && table[slots[i].id])
			*table[slots[i].id] = slots[i].fn;
	}
	return 1;
}

GP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	if (!get_export_table)
		return 0;
	int s = atomic_load(&gp_rec.state);
	if (s == GP_REC_FAILED || s == GP_REC_FORKED || gp_rec_config_load() != 0 ||
	    !(gp_rec_config()->parts & GP_REC_NVTX))
		return 0;
	const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (gp_hev_init(1u << 16) != 0)
		return 0;
	if (!fill(cb, NVTX_CB_MODULE_CORE, core_slots, sizeof(core_slots) / sizeof(core_slots[0])))
		return 0;
	fill(cb, NVTX_CB_MODULE_CORE2, core2_slots, sizeof(core2_slots) / sizeof(core2_slots[0]));
	return 1;
}
