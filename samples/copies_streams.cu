/* Copies (HtoD, DtoH, DtoD; synchronous from pageable memory, asynchronous
 * from pinned memory), sets and kernels on several streams from several host
 * threads. Every operation has its own byte count or grid size, so the checker
 * can match each one to its trace event (and its stream and host thread). */
#include "gp_sample.h"

#define NTHREADS 4
#define ROUNDS 3

extern "C" __global__ void gp_scale(float *p, size_t n, float f)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (; i < n; i += stride)
		p[i] = p[i] * f + 1.0f;
}

extern "C" __global__ void gp_add(float *dst, const float *src, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		dst[i] += src[i];
}

static pthread_barrier_t start_bar;

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	char label[16];
	cudaStream_t s;
	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	snprintf(label, sizeof label, "t%d", t);
	pthread_barrier_wait(&start_bar);

	for (int r = 0; r < ROUNDS; r++) {
		/* a distinct size for each thread and round */
		size_t n = (64u << 10) + (size_t)(t * ROUNDS + r) * 1024; /* floats */
		size_t bytes = n * sizeof(float);
		float *da = NULL, *db = NULL, *hp = NULL;
		float *hpg = (float *)malloc(bytes);
		if (!hpg)
			GP_DIE("malloc");
		for (size_t i = 0; i < n; i++)
			hpg[i] = (float)(i % 1000);
		CK(cudaMalloc((void **)&da, bytes));
		gp_log_alloc("device", "cudaMalloc", da, bytes, "");
		CK(cudaMalloc((void **)&db, bytes));
		gp_log_alloc("device", "cudaMalloc", db, bytes, "");
		CK(cudaMallocHost((void **)&hp, bytes));
		gp_log_alloc("pinned_host", "cudaMallocHost", hp, bytes, "");

		/* synchronous HtoD from pageable memory (legacy stream) */
		CK(cudaMemcpy(da, hpg, bytes, cudaMemcpyHostToDevice));
		gp_log_memcpy("HtoD", bytes, 0, "legacy");
		/* synchronous memset of the second buffer, then an async one of part of it */
		CK(cudaMemset(db, 0, bytes));
		gp_log_memset(bytes, 0, 0, "legacy");
		/* the stream below is non-blocking: order it after the legacy stream */
		CK(cudaStreamSynchronize(cudaStreamLegacy));
		size_t part = bytes / 2 + 4 * (size_t)(t + 1);
		CK(cudaMemsetAsync(db, 0, part, s));
		gp_log_memset(part, 0, 1, label);

		/* kernel on the stream: da = da*2+1 */
		dim3 g(16 + t * ROUNDS + r), b(256);
		gp_scale<<<g, b, 0, s>>>(da, n, 2.0f);
		CK(cudaGetLastError());
		gp_log_kernel("gp_scale", g, b, label);

		/* DtoD async on the stream: db = da */
		CK(cudaMemcpyAsync(db, da, bytes - 8, cudaMemcpyDeviceToDevice, s));
		gp_log_memcpy("DtoD", bytes - 8, 1, label);
		size_t tail = 8 + 16 * (size_t)(t * ROUNDS + r); /* a distinct small size */
		CK(cudaMemcpyAsync((char *)db + bytes - tail, (char *)da + bytes - tail, tail,
				   cudaMemcpyDeviceToDevice, s));
		gp_log_memcpy("DtoD", tail, 1, label);

		/* second kernel: da += db */
		dim3 g2((unsigned)((n + 127) / 128)), b2(128);
		gp_add<<<g2, b2, 0, s>>>(da, db, n);
		CK(cudaGetLastError());
		gp_log_kernel("gp_add", g2, b2, label);

		/* async DtoH into pinned memory */
		CK(cudaMemcpyAsync(hp, da, bytes, cudaMemcpyDeviceToHost, s));
		gp_log_memcpy("DtoH", bytes, 1, label);
		/* async HtoD from pinned memory, a different size */
		CK(cudaMemcpyAsync(db, hp, bytes - 4, cudaMemcpyHostToDevice, s));
		gp_log_memcpy("HtoD", bytes - 4, 1, label);
		CK(cudaStreamSynchronize(s));

		for (size_t i = 0; i < n; i += 997) {
			float v = (float)(i % 1000);
			float want = 2.0f * (2.0f * v + 1.0f);
			if (hp[i] != want)
				GP_DIE("thread %d round %d: hp[%zu] = %f, want %f", t, r, i, hp[i], want);
		}

		/* synchronous DtoD and DtoH (pageable) */
		CK(cudaMemcpy(da, db, bytes - 12, cudaMemcpyDeviceToDevice));
		gp_log_memcpy("DtoD", bytes - 12, 0, "legacy");
		CK(cudaMemcpy(hpg, da, bytes - 16, cudaMemcpyDeviceToHost));
		gp_log_memcpy("DtoH", bytes - 16, 0, "legacy");

		free(hpg);
		gp_log_free("cudaFreeHost", hp, "");
		CK(cudaFreeHost(hp));
		gp_log_free("cudaFree", db, "");
		CK(cudaFree(db));
		if (r != ROUNDS - 1 || t != 0) { /* thread 0 keeps its last da */
			gp_log_free("cudaFree", da, "");
			CK(cudaFree(da));
		}
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	return NULL;
}

int main(void)
{
	gp_begin("copies_streams");
	CK(cudaFree(0));
	pthread_barrier_init(&start_bar, NULL, NTHREADS);
	pthread_t th[NTHREADS];
	for (int t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
			GP_DIE("pthread_create");
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&start_bar);
	CK(cudaDeviceSynchronize());
	return gp_end();
}
