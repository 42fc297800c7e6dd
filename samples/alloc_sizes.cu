/* cudaMalloc/cudaFree of many sizes (1 B, odd sizes, 4 KiB..256 MiB powers of
 * two and not), cudaMallocPitch, address reuse (free then allocate the same
 * size again), and allocations left live at exit (live_end != 0).
 * Never more than about 600 MiB allocated at once. */
#include "gp_sample.h"

static void *dev_alloc(size_t n)
{
	void *p = NULL;
	CK(cudaMalloc(&p, n));
	if (!p)
		GP_DIE("cudaMalloc(%zu) returned NULL", n);
	gp_log_alloc("device", "cudaMalloc", p, n, "");
	return p;
}

static void dev_free(void *p)
{
	gp_log_free("cudaFree", p, "");
	CK(cudaFree(p));
}

int main(void)
{
	gp_begin("alloc_sizes");
	CK(cudaFree(0)); /* initialize CUDA: no allocation */

	/* cudaMalloc(0) succeeds and hands out no memory: nothing to trace. */
	void *zero = (void *)0x1;
	CK(cudaMalloc(&zero, 0));
	if (zero != NULL)
		GP_DIE("cudaMalloc(0) gave %p", zero);
	CK(cudaFree(NULL)); /* a no-op, nothing to trace */

	static const size_t odd[] = {1, 2, 3, 7, 17, 255, 257, 1000, 4095, 4097,
				     65537, 100003, 1048575, 3 * 1048576 + 7};
	void *keep_odd[sizeof odd / sizeof odd[0]];
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
		keep_odd[i] = dev_alloc(odd[i]);

	/* powers of two 4 KiB .. 256 MiB, and a non-power next to each */
	for (size_t n = 4096; n <= (256u << 20); n *= 2) {
		void *a = dev_alloc(n);
		void *b = dev_alloc(n + n / 3 + 1);
		CK(cudaMemset(a, 0, 1)); /* touch it */
		dev_free(b);
		dev_free(a);
	}

	/* address reuse: the same size again right after the free */
	for (int i = 0; i < 4; i++) {
		void *a = dev_alloc(2u << 20);
		dev_free(a);
	}

	/* free every other odd-size allocation; the rest stays live */
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i += 2)
		dev_free(keep_odd[i]);

	/* cudaMallocPitch: traced bytes = pitch * height */
	size_t pitch = 0;
	void *pp = NULL;
	CK(cudaMallocPitch(&pp, &pitch, 1000, 37));
	gp_log_alloc("device", "cudaMallocPitch", pp, (unsigned long long)pitch * 37, "");
	printf("cudaMallocPitch(1000 x 37): pitch %zu\n", pitch);
	void *pp2 = NULL;
	size_t pitch2 = 0;
	CK(cudaMallocPitch(&pp2, &pitch2, 3, 5));
	gp_log_alloc("device", "cudaMallocPitch", pp2, (unsigned long long)pitch2 * 5, "");
	dev_free(pp2);

	/* left live at exit: one big, one mid, the pitched one and half the odd ones */
	void *live_big = dev_alloc(100u * 1000 * 1000 + 1);
	void *live_mid = dev_alloc(12345678);
	(void)live_big;
	(void)live_mid;
	(void)pp;

	CK(cudaDeviceSynchronize());
	return gp_end(); /* exits without freeing: the trace must end with live memory */
}
