/* cudaMallocAsync/cudaFreeAsync on the device's default pool and
 * cudaMallocFromPoolAsync on a custom pool (cudaMemPoolCreate with a release
 * threshold), on two streams, one block freed on the other stream than the one
 * it was allocated on. The custom pool is emptied, trimmed and destroyed; two
 * default-pool blocks stay live at exit. Pool allocations are kind "device".
 * The program's first CUDA call is a cudaMallocAsync on the legacy default
 * stream: CUDA loads gpuprof while that call runs, so no patched slot (tensor
 * mode) sees it and the trace must have it all the same. */
#include "gp_sample.h"

struct strm {
	cudaStream_t s;
	const char *label;
	unsigned long long id;
};

static struct strm S[2];

static void *a_alloc(size_t n, struct strm *st, cudaMemPool_t pool, const char *pool_label)
{
	void *p = NULL;
	char extra[160];
	if (pool) {
		CK(cudaMallocFromPoolAsync(&p, n, pool, st->s));
	} else {
		CK(cudaMallocAsync(&p, n, st->s));
	}
	if (!p)
		GP_DIE("async allocation of %zu returned NULL", n);
	snprintf(extra, sizeof extra, " async=1 pool=%s stream=%s stream_id=%llu", pool_label,
		 st->label, st->id);
	gp_log_alloc("device", pool ? "cudaMallocFromPoolAsync" : "cudaMallocAsync", p, n, extra);
	return p;
}

static void a_free(void *p, struct strm *st, const char *pool_label)
{
	char extra[160];
	snprintf(extra, sizeof extra, " async=1 pool=%s stream=%s stream_id=%llu", pool_label,
		 st->label, st->id);
	gp_log_free("cudaFreeAsync", p, extra);
	CK(cudaFreeAsync(p, st->s));
}

int main(void)
{
	gp_begin("async_pools");
	void *first = NULL;
	CK(cudaMallocAsync(&first, 12345, 0)); /* the first CUDA call */
	static struct strm legacy = { 0, "legacy", 0 };
	CK(cudaStreamGetId(0, &legacy.id));
	{
		char extra[160];
		snprintf(extra, sizeof extra, " async=1 pool=default stream=%s stream_id=%llu",
			 legacy.label, legacy.id);
		gp_log_alloc("device", "cudaMallocAsync", first, 12345, extra);
	}
	int dev = 0, supported = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
	if (!supported)
		GP_DIE("device %d has no memory pools", dev);

	for (int i = 0; i < 2; i++) {
		CK(cudaStreamCreateWithFlags(&S[i].s, cudaStreamNonBlocking));
		CK(cudaStreamGetId(S[i].s, &S[i].id));
		S[i].label = i ? "s2" : "s1";
		printf("stream %s: cudaStreamGetId %llu\n", S[i].label, S[i].id);
	}

	cudaMemPool_t defpool;
	CK(cudaDeviceGetDefaultMemPool(&defpool, dev));

	cudaMemPoolProps props;
	memset(&props, 0, sizeof props);
	props.allocType = cudaMemAllocationTypePinned;
	props.handleTypes = cudaMemHandleTypeNone;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = dev;
	cudaMemPool_t pool;
	CK(cudaMemPoolCreate(&pool, &props));
	unsigned long long thr = 64ull << 20;
	CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));

	/* default pool, both streams, odd and even sizes */
	static const size_t dsz[] = {1, 4096, 1000003, 8u << 20, 33u << 20, 777};
	void *d[6];
	for (int i = 0; i < 6; i++)
		d[i] = a_alloc(dsz[i], &S[i & 1], NULL, "default");

	/* custom pool, both streams */
	static const size_t csz[] = {512, 65536 + 5, 2u << 20, 20u << 20, 3};
	void *c[5];
	for (int i = 0; i < 5; i++)
		c[i] = a_alloc(csz[i], &S[(i + 1) & 1], pool, "custom");

	/* use some of it */
	CK(cudaMemsetAsync(d[3], 1, dsz[3], S[1].s));
	CK(cudaMemsetAsync(c[3], 2, csz[3], S[0].s));

	/* frees on the allocating stream */
	a_free(d[0], &S[0], "default");
	a_free(d[2], &S[0], "default");
	a_free(c[0], &S[1], "custom");
	a_free(c[2], &S[1], "custom");

	/* a free on the other stream: order it after the allocating stream */
	cudaEvent_t ev;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaEventRecord(ev, S[1].s));
	CK(cudaStreamWaitEvent(S[0].s, ev, 0));
	a_free(d[3], &S[0], "default"); /* allocated on s2 */
	a_free(c[1], &S[0], "custom");  /* allocated on s1... freed on s1 */

	/* reuse inside the pools: allocate again on the same streams */
	void *r1 = a_alloc(4096, &S[0], NULL, "default");
	void *r2 = a_alloc(2u << 20, &S[1], pool, "custom");
	a_free(r1, &S[0], "default");
	a_free(r2, &S[1], "custom");

	/* empty the custom pool */
	a_free(c[3], &S[0], "custom");
	a_free(c[4], &S[0], "custom");
	CK(cudaStreamSynchronize(S[0].s));
	CK(cudaStreamSynchronize(S[1].s));
	CK(cudaMemPoolTrimTo(pool, 0));
	CK(cudaMemPoolDestroy(pool));

	a_free(d[5], &S[1], "default");
	a_free(first, &legacy, "default");
	CK(cudaStreamSynchronize(S[1].s));
	CK(cudaStreamSynchronize(0));
	/* d[1] and d[4] stay live at exit */

	CK(cudaEventDestroy(ev));
	for (int i = 0; i < 2; i++)
		CK(cudaStreamDestroy(S[i].s));
	CK(cudaDeviceSynchronize());
	return gp_end();
}
