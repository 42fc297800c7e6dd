/* Allocates and frees in a loop planned for about 6 s, printing what it did as
 * it goes (flushed line by line), stops half way (about 3 s), sleeps 2 s so
 * that the recorder's once-a-second flush has written everything, then kills
 * itself with SIGKILL. The launcher must report the kill (exit 137) and recover
 * the trace in place; the recovered trace must hold at least everything done
 * more than 1.5 s before GPUPROF_KILL's t_ms. */
#include "gp_sample.h"

#include <signal.h>

#define PLANNED_MS 6000
#define STEP_MS 100

int main(void)
{
	gp_begin("killed_midway");
	printf("GPUPROF_EXPECT exit=killed\n");
	CK(cudaFree(0));

	void *live[64];
	int nlive = 0;
	long long start = gp_t_ms();
	for (int i = 0;; i++) {
		long long now = gp_t_ms() - start;
		if (now >= PLANNED_MS / 2)
			break; /* half way */
		size_t n = 4096 + (size_t)i * 65536 + (size_t)(i % 7);
		void *p = NULL;
		CK(cudaMalloc(&p, n));
		gp_log_alloc("device", "cudaMalloc", p, n, "");
		live[nlive++] = p;
		if (i % 2 == 1) { /* free the oldest */
			gp_log_free("cudaFree", live[0], "");
			CK(cudaFree(live[0]));
			memmove(live, live + 1, sizeof live[0] * (size_t)--nlive);
		}
		if (nlive == 64)
			GP_DIE("too many live blocks");
		gp_print_summary(); /* what has been done so far */
		gp_sleep_ms(STEP_MS);
	}
	CK(cudaDeviceSynchronize());
	gp_printf("killed_midway: stopping half way with %d blocks live, sleeping 2 s then SIGKILL\n", nlive);
	gp_print_summary();
	gp_sleep_ms(2000);
	gp_printf("GPUPROF_KILL t_ms=%lld signal=%d\n", gp_t_ms(), SIGKILL);
	fflush(stdout);
	kill(getpid(), SIGKILL);
	gp_sleep_ms(10000);
	return 3; /* not reached */
}
