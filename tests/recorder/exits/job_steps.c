/* The steps of a training job as the recorder sees them, without a GPU
 * (test_exits.py): the recorder loaded and started as CUDA loads it
 * (InitializeInjection), over the stand-in CUPTI (stub_cupti.c); each step
 * allocates and frees blocks through the recorder's entry point for
 * PyTorch's allocator (as native mode's hook does) and marks "step:N"
 * through NVTX (as the PyTorch hooks do), then prints
 * `step N max_allocated=B t=UNIX_S`, PyTorch's peak as the hook counts it.
 * A library, so that a C program (exit_job.c) and Python (job.py) run the
 * same steps. */
#include "torch_alloc.h"

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB (1ull << 20)

static gp_ta_event_fn event;
static uint64_t allocated, max_allocated, next_addr = 0x7f0000000000ull;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void send(uint16_t type, uint64_t addr, uint64_t bytes)
{
	struct gp_ta_event ev = { 0 };
	ev.version = GP_TA_VERSION;
	ev.type = type;
	ev.ts = now_ns();
	ev.addr = addr;
	ev.bytes = bytes;
	ev.requested = bytes;
	ev.allocated = allocated;
	ev.tid = (uint32_t)syscall(SYS_gettid);
	if (event(&ev) != 0)
		fprintf(stderr, "job: event %d refused\n", type);
}

static uint64_t alloc_block(uint64_t bytes)
{
	uint64_t addr = next_addr;
	next_addr += (bytes + MIB - 1) / MIB * MIB + MIB;
	allocated += bytes;
	if (allocated > max_allocated)
		max_allocated = allocated;
	send(GP_TA_ALLOC, addr, bytes);
	return addr;
}

static void free_block(uint64_t addr, uint64_t bytes)
{
	allocated -= bytes;
	send(GP_TA_FREE, addr, 0);
}

__attribute__((visibility("default"))) int job_start(const char *recorder)
{
	/* NVTX loads its tool at its first call: the recorder, loaded here */
	setenv("NVTX_INJECTION64_PATH", recorder, 1);
	void *lib = dlopen(recorder, RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "job: %s\n", dlerror());
		return -1;
	}
	int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
	event = (gp_ta_event_fn)dlsym(lib, "gpuprof_torch_alloc_event");
	if (!init || !event)
		return -1;
	init();
	send(GP_TA_ATTACH, 0, 0);
	alloc_block(8 * MIB + 512); /* the parameters, kept */
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	return 0;
}

/* An NVTX mark, as the PyTorch hooks make one (for torch/__init__.py). */
__attribute__((visibility("default"))) void job_mark(const char *text)
{
	nvtxMarkA(text);
}

/* Step n's activations: the third step's are the largest, so the peak is
 * not simply the last step's. */
__attribute__((visibility("default"))) void job_step(int n)
{
	static const uint64_t act[] = { 5, 9, 17, 3, 4, 6 };
	uint64_t a_bytes = act[(n - 1) % 6] * MIB + 4096u * (unsigned)n;
	uint64_t a = alloc_block(a_bytes);
	uint64_t g = alloc_block(2 * MIB);
	free_block(a, a_bytes);
	free_block(g, 2 * MIB);
	char mark[32];
	snprintf(mark, sizeof(mark), "step:%d", n);
	nvtxMarkA(mark);
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	printf("step %d max_allocated=%llu t=%.6f\n", n, (unsigned long long)max_allocated,
	       (double)t.tv_sec + (double)t.tv_nsec / 1e9);
	fflush(stdout);
}
