/* Page-locked host memory: cudaMallocHost and cudaHostAlloc with each flag,
 * freed with cudaFreeHost; two blocks stay live at exit. Kind "pinned_host". */
#include "gp_sample.h"

static void *host_alloc(size_t n, unsigned flags, const char *api)
{
	void *p = NULL;
	if (strcmp(api, "cudaMallocHost") == 0) {
		CK(cudaMallocHost(&p, n));
	} else {
		CK(cudaHostAlloc(&p, n, flags));
	}
	if (!p)
		GP_DIE("%s(%zu) returned NULL", api, n);
	memset(p, 0x5a, n < 4096 ? n : 4096); /* touch it */
	gp_log_alloc("pinned_host", api, p, n, "");
	return p;
}

static void host_free(void *p)
{
	gp_log_free("cudaFreeHost", p, "");
	CK(cudaFreeHost(p));
}

int main(void)
{
	gp_begin("pinned_host");
	CK(cudaFree(0));

	static const size_t sz[] = {1, 100, 4096, 4097, 65536, 1000001, 8u << 20, 32u << 20 };
	void *mh[8];
	for (int i = 0; i < 8; i++)
		mh[i] = host_alloc(sz[i], 0, "cudaMallocHost");

	static const unsigned flags[] = {cudaHostAllocDefault, cudaHostAllocPortable,
					 cudaHostAllocMapped, cudaHostAllocWriteCombined,
					 cudaHostAllocPortable | cudaHostAllocMapped};
	void *ha[5];
	for (int i = 0; i < 5; i++)
		ha[i] = host_alloc(3000 + 70001 * (size_t)i, flags[i], "cudaHostAlloc");

	/* a mapped block is visible from the device: copy through it */
	void *dp = NULL;
	CK(cudaHostGetDevicePointer(&dp, ha[2], 0));
	if (!dp)
		GP_DIE("no device pointer for mapped memory");

	for (int i = 0; i < 8; i++)
		if (i != 3)
			host_free(mh[i]);
	for (int i = 0; i < 5; i++)
		if (i != 1)
			host_free(ha[i]);

	/* reuse */
	for (int i = 0; i < 3; i++)
		host_free(host_alloc(1u << 20, 0, "cudaMallocHost"));

	/* mh[3] and ha[1] stay live at exit */
	CK(cudaDeviceSynchronize());
	return gp_end();
}
