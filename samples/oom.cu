/* Deliberate out-of-memory: cudaMalloc and cudaMallocAsync of the device's
 * total memory + 1 GiB. Both must fail with cudaErrorMemoryAllocation; the
 * program clears the error, carries on with small allocations and exits 0. */
#include "gp_sample.h"

int main(void)
{
	gp_begin("oom");
	CK(cudaFree(0));
	size_t free_b = 0, total_b = 0;
	CK(cudaMemGetInfo(&free_b, &total_b));
	printf("device 0: %zu bytes free of %zu\n", free_b, total_b);
	const size_t huge = total_b + (1ull << 30);

	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, huge);
	if (e != cudaErrorMemoryAllocation)
		GP_DIE("cudaMalloc(%zu) gave %s, expected cudaErrorMemoryAllocation",
		       huge, cudaGetErrorName(e));
	printf("cudaMalloc(%zu) failed as intended: %s: %s\n", huge, cudaGetErrorName(e),
	       cudaGetErrorString(e));
	gp_log_oom("cudaMalloc", huge, e, free_b, total_b);
	(void)cudaGetLastError(); /* clear it */

	void *small = NULL;
	CK(cudaMalloc(&small, 4096));
	gp_log_alloc("device", "cudaMalloc", small, 4096, "");

	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	unsigned long long sid = 0;
	CK(cudaStreamGetId(s, &sid));
	CK(cudaMemGetInfo(&free_b, &total_b));
	void *q = NULL;
	e = cudaMallocAsync(&q, huge, s);
	if (e != cudaErrorMemoryAllocation)
		GP_DIE("cudaMallocAsync(%zu) gave %s, expected cudaErrorMemoryAllocation",
		       huge, cudaGetErrorName(e));
	printf("cudaMallocAsync(%zu) failed as intended: %s: %s\n", huge, cudaGetErrorName(e),
	       cudaGetErrorString(e));
	gp_log_oom("cudaMallocAsync", huge, e, free_b, total_b);
	(void)cudaGetLastError();
	CK(cudaStreamSynchronize(s));

	/* the device still works */
	char extra[128];
	snprintf(extra, sizeof extra, " async=1 pool=default stream=s1 stream_id=%llu", sid);
	void *a = NULL;
	CK(cudaMallocAsync(&a, 1u << 20, s));
	gp_log_alloc("device", "cudaMallocAsync", a, 1u << 20, extra);
	CK(cudaMemsetAsync(a, 0, 1u << 20, s));
	gp_log_free("cudaFreeAsync", a, extra);
	CK(cudaFreeAsync(a, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));

	void *b = NULL;
	CK(cudaMalloc(&b, 3u << 20));
	gp_log_alloc("device", "cudaMalloc", b, 3u << 20, "");
	CK(cudaMemset(b, 0, 3u << 20));
	gp_log_free("cudaFree", b, "");
	CK(cudaFree(b));
	gp_log_free("cudaFree", small, "");
	CK(cudaFree(small));
	CK(cudaDeviceSynchronize());
	return gp_end();
}
