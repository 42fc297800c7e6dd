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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB (1ull << 20)

static gp_ta_event_fn event;
/* The allocator's state, under its lock as PyTorch's is: job_thread_step
 * allocates from several threads. */
static pthread_mutex_t allocator = PTHREAD_MUTEX_INITIALIZER;
static uint64_t allocated, max_allocated, next_addr = 0x7f0000000000ull;
/* the stand-in CUPTI's kernel launch (stub_cupti.c), found at the start */
static int (*stub_kernel)(const char *name);

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
	pthread_mutex_lock(&allocator);
	uint64_t addr = next_addr;
	next_addr += (bytes + MIB - 1) / MIB * MIB + MIB;
	allocated += bytes;
	if (allocated > max_allocated)
		max_allocated = allocated;
	send(GP_TA_ALLOC, addr, bytes);
	pthread_mutex_unlock(&allocator);
	return addr;
}

static void free_block(uint64_t addr, uint64_t bytes)
{
	pthread_mutex_lock(&allocator);
	allocated -= bytes;
	send(GP_TA_FREE, addr, 0);
	pthread_mutex_unlock(&allocator);
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
	stub_kernel = (int (*)(const char *))dlsym(RTLD_DEFAULT, "gp_stub_cupti_kernel");
	init();
	send(GP_TA_ATTACH, 0, 0);
	alloc_block(8 * MIB + 512); /* the parameters, kept */
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	return 0;
}

/* A segment reserved as PyTorch's allocator does (its cudaMalloc), kept. */
__attribute__((visibility("default"))) void job_reserve(unsigned bytes)
{
	static uint64_t next_segment = 0x7e0000000000ull;

	pthread_mutex_lock(&allocator);
	send(GP_TA_SEGMENT_ALLOC, next_segment, bytes);
	next_segment += (uint64_t)bytes + MIB;
	pthread_mutex_unlock(&allocator);
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
	pthread_mutex_lock(&allocator);
	unsigned long long peak = max_allocated;
	pthread_mutex_unlock(&allocator);
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	printf("step %d max_allocated=%llu t=%.6f\n", n, peak,
	       (double)t.tv_sec + (double)t.tv_nsec / 1e9);
	fflush(stdout);
}

/* One thread's share of a step, as a data-parallel or pipelined job's
 * threads run them at once: inside an NVTX range, a block allocated and
 * freed and kernels kernels launched, their records made by the stand-in
 * CUPTI on this thread (gp_stub_cupti_kernel). Returns how many of the
 * records found no buffer (the recorder's pool was used up), or -1
 * without the stand-in CUPTI. */
__attribute__((visibility("default"))) int job_thread_step(int kernels)
{
	if (!stub_kernel)
		return -1;
	int lost = 0;
	nvtxRangePushA("thread_step");
	uint64_t a = alloc_block(MIB);
	for (int k = 0; k < kernels; k++)
		if (stub_kernel("gp_stub_kernel") != 0)
			lost++;
	free_block(a, MIB);
	nvtxRangePop();
	return lost;
}
