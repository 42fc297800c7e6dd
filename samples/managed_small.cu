/* A few small cudaMallocManaged buffers (under 4 MiB in all), written by a
 * kernel, read back on the host, all freed. Kind "managed". */
#include "gp_sample.h"

extern "C" __global__ void gp_managed_fill(unsigned *p, size_t n, unsigned base)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (; i < n; i += stride)
		p[i] = base + (unsigned)i;
}

int main(void)
{
	gp_begin("managed_small");
	CK(cudaFree(0));

	static const size_t sz[] = {4, 65536, 1048576 + 12, 2u << 20}; /* 3.06 MiB */
	static const unsigned fl[] = {cudaMemAttachGlobal, cudaMemAttachGlobal,
				      cudaMemAttachHost, cudaMemAttachGlobal};
	unsigned *m[4];
	for (int i = 0; i < 4; i++) {
		CK(cudaMallocManaged((void **)&m[i], sz[i], fl[i]));
		if (!m[i])
			GP_DIE("cudaMallocManaged(%zu) returned NULL", sz[i]);
		gp_log_alloc("managed", "cudaMallocManaged", m[i], sz[i], "");
	}

	for (int i = 0; i < 4; i++) {
		size_t n = sz[i] / sizeof(unsigned);
		dim3 g(8 + i), b(128);
		if (fl[i] == cudaMemAttachHost)
			CK(cudaStreamAttachMemAsync(0, m[i], 0, cudaMemAttachGlobal));
		gp_managed_fill<<<g, b>>>(m[i], n, 1000u * (unsigned)i);
		CK(cudaGetLastError());
		gp_log_kernel("gp_managed_fill", g, b, "legacy");
		CK(cudaDeviceSynchronize());
		for (size_t j = 0; j < n; j += n / 7 + 1)
			if (m[i][j] != 1000u * (unsigned)i + (unsigned)j)
				GP_DIE("managed buffer %d word %zu: %u", i, j, m[i][j]);
	}

	for (int i = 0; i < 4; i++) {
		gp_log_free("cudaFree", m[i], "");
		CK(cudaFree(m[i]));
	}
	return gp_end();
}
