/* NVTX ranges on 3 threads (and the main thread):
 *  - push/pop nested 3 deep: nvtxRangePushA, nvtxRangePushEx (color, payload),
 *    nvtxDomainRangePushEx in a domain with a registered string, a category
 *    (named) and a color;
 *  - start/end ranges (nvtxRangeStartA/End, nvtxDomainRangeStartEx/End), one
 *    started on one thread and ended on another, in each flavour;
 *  - marks (nvtxMarkA, nvtxDomainMarkEx);
 *  - names with hostile bytes: quotes, backslash, newline, tab, CR, control
 *    characters, DEL, invalid UTF-8 (0xff, a lone 0xc3, a lone 0x80), valid
 *    multi-byte UTF-8, U+2028, HTML, printf directives;
 *  - cudaMalloc inside ranges (the checker finds the cudaMalloc API event
 *    inside the innermost open range on that thread).
 * What each thread did is printed at the end, one GPUPROF_NVTX line per call,
 * names as hex bytes. Without NVTX_INJECTION64_PATH the NVTX calls are no-ops
 * and the program still runs. */
#include "gp_sample.h"

#include <nvtx3/nvToolsExt.h>

#define NTHREADS 3
#define ROUNDS 2

static const char *const hostile[] = {
	"quote\"d 'single' \"\"",
	"back\\slash \\u0041 \\n \\\\",
	"new\nline\ttab\rcr",
	"ctl\x01\x02\x1f\x7f end",
	"bad\xff utf8 \xc3( lone\x80 cont",
	"utf8 \xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 ls\xe2\x80\xa8ps",
	"</script><b>&amp; %s %n %%",
};
#define NHOSTILE (sizeof hostile / sizeof hostile[0])

static const char domain_name[] = "gpuprof.test \"dom\" \\";
static const char category_name[] = "io \"cat\"";
#define CATEGORY 7u
#define COLOR_MID 0xFF3366CCu
#define COLOR_INNER 0xFF00FF00u
#define COLOR_SPAN 0xFFAA5500u

static nvtxDomainHandle_t dom;
static nvtxStringHandle_t reg[NTHREADS];
static char reg_text[NTHREADS][64];
static char cross_dom_text[64];
static nvtxStringHandle_t cross_dom_reg;

/* per-thread record of the NVTX calls, printed by main at the end */
struct trec {
	char buf[1 << 16];
	size_t len;
	int n;
	long tid;
};
static struct trec rec[NTHREADS + 1]; /* index NTHREADS = main thread */

static void rec_line(int th, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rec_line(int th, const char *fmt, ...)
{
	struct trec *r = &rec[th];
	va_list ap;
	int k = snprintf(r->buf + r->len, sizeof r->buf - r->len,
			 "GPUPROF_NVTX thread=%d tid=%ld n=%d ", th, r->tid, r->n++);
	if (k < 0 || (size_t)k >= sizeof r->buf - r->len)
		GP_DIE("record buffer full");
	r->len += (size_t)k;
	va_start(ap, fmt);
	k = vsnprintf(r->buf + r->len, sizeof r->buf - r->len, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k + 1 >= sizeof r->buf - r->len)
		GP_DIE("record buffer full");
	r->len += (size_t)k;
	r->buf[r->len++] = '\n';
	r->buf[r->len] = 0;
}

static const char *hx(const char *s, char *out) /* out: 2*strlen+1 */
{
	gp_hex(s, strlen(s), out);
	return out;
}

/* cross-thread start/end handoff */
static pthread_mutex_t xmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t xcv = PTHREAD_COND_INITIALIZER;
static int xready[2];
static nvtxRangeId_t xid[2];

static void post(int k, nvtxRangeId_t id)
{
	pthread_mutex_lock(&xmu);
	xid[k] = id;
	xready[k] = 1;
	pthread_cond_broadcast(&xcv);
	pthread_mutex_unlock(&xmu);
}

static nvtxRangeId_t wait_for(int k)
{
	pthread_mutex_lock(&xmu);
	while (!xready[k])
		pthread_cond_wait(&xcv, &xmu);
	nvtxRangeId_t id = xid[k];
	pthread_mutex_unlock(&xmu);
	return id;
}

static void *dmalloc_logged(int th, size_t n)
{
	void *p = NULL;
	CK(cudaMalloc(&p, n));
	gp_log_alloc("device", "cudaMalloc", p, n, "");
	rec_line(th, "op=alloc addr=0x%llx bytes=%zu", (unsigned long long)(uintptr_t)p, n);
	return p;
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	char h1[512], h2[512], h3[512];
	char name[256];
	rec[t].tid = gp_gettid();
	CK(cudaSetDevice(0));

	/* cross-thread ranges: t0 starts "cross t0->t1" (default domain), t1 ends it
	 * and starts one in the domain that t2 ends */
	if (t == 0) {
		snprintf(name, sizeof name, "cross \"t0->t1\"");
		nvtxRangeId_t id = nvtxRangeStartA(name);
		rec_line(t, "op=start key=cross0 name_hex=%s id=%llu", hx(name, h1),
			 (unsigned long long)id);
		post(0, id);
	} else if (t == 1) {
		nvtxRangeId_t id = wait_for(0);
		nvtxRangeEnd(id);
		rec_line(t, "op=end key=cross0 id=%llu", (unsigned long long)id);
		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof a);
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.colorType = NVTX_COLOR_ARGB;
		a.color = COLOR_SPAN;
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = cross_dom_reg;
		id = nvtxDomainRangeStartEx(dom, &a);
		rec_line(t, "op=start key=cross1 name_hex=%s domain_hex=%s color=0x%08X id=%llu",
			 hx(cross_dom_text, h1), hx(domain_name, h2), COLOR_SPAN,
			 (unsigned long long)id);
		post(1, id);
	} else {
		nvtxRangeId_t id = wait_for(1);
		nvtxDomainRangeEnd(dom, id);
		rec_line(t, "op=end key=cross1 domain_hex=%s id=%llu", hx(domain_name, h1),
			 (unsigned long long)id);
	}

	for (int r = 0; r < ROUNDS; r++) {
		/* depth 1: plain push */
		snprintf(name, sizeof name, "outer t%d r%d", t, r);
		nvtxRangePushA(name);
		rec_line(t, "op=push name_hex=%s", hx(name, h1));

		snprintf(name, sizeof name, "mark t%d r%d %s", t, r, hostile[(t + r) % NHOSTILE]);
		nvtxMarkA(name);
		rec_line(t, "op=mark name_hex=%s", hx(name, h1));

		/* depth 2: push with attributes, hostile name */
		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof a);
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.colorType = NVTX_COLOR_ARGB;
		a.color = COLOR_MID;
		a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
		a.payload.ullValue = 1000u + 10u * (unsigned)t + (unsigned)r;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		snprintf(name, sizeof name, "%s t%d", hostile[(t + r + 1) % NHOSTILE], t);
		a.message.ascii = name;
		nvtxRangePushEx(&a);
		rec_line(t, "op=push name_hex=%s color=0x%08X payload=%llu", hx(name, h1), COLOR_MID,
			 (unsigned long long)a.payload.ullValue);

		/* depth 3: domain push, registered string, category, color */
		nvtxEventAttributes_t d;
		memset(&d, 0, sizeof d);
		d.version = NVTX_VERSION;
		d.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		d.category = CATEGORY;
		d.colorType = NVTX_COLOR_ARGB;
		d.color = COLOR_INNER;
		d.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		d.message.registered = reg[t];
		nvtxDomainRangePushEx(dom, &d);
		rec_line(t, "op=push name_hex=%s domain_hex=%s category=%u category_name_hex=%s color=0x%08X",
			 hx(reg_text[t], h1), hx(domain_name, h2), CATEGORY,
			 hx(category_name, h3), COLOR_INNER);
		void *x = dmalloc_logged(t, 1000 + 100 * (size_t)t + (size_t)r);
		nvtxDomainRangePop(dom);
		rec_line(t, "op=pop domain_hex=%s", hx(domain_name, h1));

		/* depth 3 again: plain push with another hostile name */
		snprintf(name, sizeof name, "%s t%d r%d", hostile[(t + r + 2) % NHOSTILE], t, r);
		nvtxRangePushA(name);
		rec_line(t, "op=push name_hex=%s", hx(name, h1));
		void *y = dmalloc_logged(t, (1u << 20) + 4096 * (size_t)t + (size_t)r);

		/* a start/end range on this thread, started inside the push, ended outside */
		snprintf(name, sizeof name, "span t%d r%d \"x\"", t, r);
		nvtxRangeId_t sid = nvtxRangeStartA(name);
		char key[32];
		snprintf(key, sizeof key, "span%d_%d", t, r);
		rec_line(t, "op=start key=%s name_hex=%s id=%llu", key, hx(name, h1),
			 (unsigned long long)sid);
		nvtxRangePop();
		rec_line(t, "op=pop");
		nvtxRangeEnd(sid);
		rec_line(t, "op=end key=%s id=%llu", key, (unsigned long long)sid);

		nvtxRangePop(); /* depth 2 */
		rec_line(t, "op=pop");

		gp_log_free("cudaFree", x, "");
		CK(cudaFree(x));
		if (!(t == 2 && r == ROUNDS - 1)) { /* one block stays live */
			gp_log_free("cudaFree", y, "");
			CK(cudaFree(y));
		}
		nvtxRangePop(); /* depth 1 */
		rec_line(t, "op=pop");
	}
	return NULL;
}

int main(void)
{
	char h1[512], h2[512];
	gp_begin("nvtx_threads");
	rec[NTHREADS].tid = gp_gettid();
	CK(cudaFree(0)); /* CUDA initializes (and with it the recorder) */

	dom = nvtxDomainCreateA(domain_name);
	nvtxDomainNameCategoryA(dom, CATEGORY, category_name);
	for (int t = 0; t < NTHREADS; t++) {
		snprintf(reg_text[t], sizeof reg_text[t], "inner \"registered\" \\ t%d", t);
		reg[t] = nvtxDomainRegisterStringA(dom, reg_text[t]);
	}
	snprintf(cross_dom_text, sizeof cross_dom_text, "cross dom \"t1->t2\"");
	cross_dom_reg = nvtxDomainRegisterStringA(dom, cross_dom_text);

	const int M = NTHREADS;
	const char *main_name = "main \"all\" \\ threads\t\xff";
	nvtxRangePushA(main_name);
	rec_line(M, "op=push name_hex=%s", hx(main_name, h1));

	nvtxEventAttributes_t m;
	memset(&m, 0, sizeof m);
	m.version = NVTX_VERSION;
	m.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	m.messageType = NVTX_MESSAGE_TYPE_ASCII;
	m.message.ascii = "domain mark \"m\"";
	nvtxDomainMarkEx(dom, &m);
	rec_line(M, "op=mark name_hex=%s domain_hex=%s", hx(m.message.ascii, h1),
		 hx(domain_name, h2));

	pthread_t th[NTHREADS];
	for (int t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
			GP_DIE("pthread_create");
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);

	nvtxRangePop();
	rec_line(M, "op=pop");

	CK(cudaDeviceSynchronize());
	for (int t = 0; t <= NTHREADS; t++)
		fputs(rec[t].buf, stdout);
	printf("GPUPROF_EXPECT nvtx threads=%d\n", NTHREADS + 1);
	printf("nvtx_threads: %d threads, domain \"%s\"\n", NTHREADS + 1, domain_name);
	nvtxDomainDestroy(dom);
	return gp_end();
}
