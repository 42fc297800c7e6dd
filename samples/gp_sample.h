/* Shared helpers for the gpuprof CUDA samples (header-only, one TU per sample).
 *
 * Every sample tells, on stdout, exactly what it did, in the line format that
 * tests/gpu/check_trace.py reads (documented at the top of that file):
 *
 *   GPUPROF_BEGIN sample=NAME pid=PID format=1
 *   GPUPROF_ALLOC seq=N t_ms=T tid=TID device=D kind=K api=API addr=0x.. bytes=B [async=1 pool=L stream=L stream_id=ID]
 *   GPUPROF_FREE  seq=N t_ms=T tid=TID device=D kind=K api=API addr=0x.. bytes=B [async=1 ...]
 *   GPUPROF_OOM   t_ms=T tid=TID api=API bytes=B device=D result=R error=NAME free=F total=T
 *   GPUPROF_OP    t_ms=T tid=TID op=memcpy dir=HtoD bytes=B async=0|1 stream=L
 *   GPUPROF_OP    t_ms=T tid=TID op=memset bytes=B value=V async=0|1 stream=L
 *   GPUPROF_OP    t_ms=T tid=TID op=kernel name=N grid=X,Y,Z block=X,Y,Z stream=L
 *   GPUPROF_NVTX  thread=I tid=TID n=K op=push|pop|start|end|mark|alloc ...
 *   GPUPROF_EXPECT ...   (summaries, cross-checked by the checker)
 *   GPUPROF_KILL  t_ms=T signal=9
 *   GPUPROF_END   sample=NAME
 *
 * All logging goes through one mutex so that line order == seq order. A free
 * is logged BEFORE the call that frees (an address can only be handed out
 * again after the free returned), an allocation AFTER the call returned: the
 * seq order is then a valid per-address order even across threads.
 *
 * Every CUDA call is checked with CK(); an unexpected error exits 1. */
#ifndef GP_SAMPLE_H
#define GP_SAMPLE_H

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CK(call)                                                                 \
	do {                                                                     \
		cudaError_t gp_ck_err_ = (call);                                 \
		if (gp_ck_err_ != cudaSuccess) {                                 \
			fprintf(stderr, "%s:%d: %s failed: %s (%s, %d)\n",       \
				__FILE__, __LINE__, #call,                       \
				cudaGetErrorString(gp_ck_err_),                  \
				cudaGetErrorName(gp_ck_err_), (int)gp_ck_err_);  \
			fflush(stdout);                                          \
			exit(1);                                                 \
		}                                                                \
	} while (0)

#define GP_DIE(...)                                                              \
	do {                                                                     \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                  \
		fprintf(stderr, __VA_ARGS__);                                    \
		fputc('\n', stderr);                                             \
		fflush(stdout);                                                  \
		exit(1);                                                         \
	} while (0)

#define GP_MAX_KINDS 8
#define GP_MAX_LIVE 4096

struct gp_kind_tally {
	const char *kind;
	unsigned long long allocs, frees, alloc_bytes, free_bytes;
};

struct gp_live {
	uintptr_t addr;
	unsigned long long bytes;
	const char *kind;
	int used;
};

static pthread_mutex_t gp_log_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long gp_seq;
static struct timespec gp_t0;
static const char *gp_sample_name = "?";
static struct gp_kind_tally gp_tally[GP_MAX_KINDS];
static struct gp_live gp_live_tab[GP_MAX_LIVE];
static unsigned long long gp_oom_count;
static unsigned long long gp_n_memcpy, gp_b_memcpy, gp_n_memset, gp_b_memset, gp_n_kernel;

static inline long gp_gettid(void) { return (long)syscall(SYS_gettid); }

static inline long long gp_t_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)(t.tv_sec - gp_t0.tv_sec) * 1000 +
	       (t.tv_nsec - gp_t0.tv_nsec) / 1000000;
}

/* printf to stdout under the log mutex, flushed (killed_midway needs it). */
static inline void gp_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void gp_printf(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&gp_log_mu);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&gp_log_mu);
}

static inline void gp_begin(const char *name)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &gp_t0);
	gp_sample_name = name;
	printf("GPUPROF_BEGIN sample=%s pid=%ld format=1\n", name, (long)getpid());
	fflush(stdout);
}

static inline struct gp_kind_tally *gp_tally_for(const char *kind)
{
	for (int i = 0; i < GP_MAX_KINDS; i++) {
		if (!gp_tally[i].kind) {
			gp_tally[i].kind = kind;
			return &gp_tally[i];
		}
		if (strcmp(gp_tally[i].kind, kind) == 0)
			return &gp_tally[i];
	}
	GP_DIE("too many kinds");
}

/* extra: "" or " async=1 pool=... stream=... stream_id=..." */
static inline void gp_log_alloc(const char *kind, const char *api, const void *p,
			 unsigned long long bytes, const char *extra)
{
	pthread_mutex_lock(&gp_log_mu);
	int slot = -1;
	for (int i = 0; i < GP_MAX_LIVE; i++) {
		if (gp_live_tab[i].used && gp_live_tab[i].addr == (uintptr_t)p) {
			fprintf(stderr, "sample bug: %p allocated twice\n", p);
			exit(1);
		}
		if (!gp_live_tab[i].used && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		fprintf(stderr, "sample bug: live table full\n");
		exit(1);
	}
	gp_live_tab[slot].used = 1;
	gp_live_tab[slot].addr = (uintptr_t)p;
	gp_live_tab[slot].bytes = bytes;
	gp_live_tab[slot].kind = kind;
	struct gp_kind_tally *t = gp_tally_for(kind);
	t->allocs++;
	t->alloc_bytes += bytes;
	printf("GPUPROF_ALLOC seq=%llu t_ms=%lld tid=%ld device=0 kind=%s api=%s addr=0x%llx bytes=%llu%s\n",
	       ++gp_seq, gp_t_ms(), gp_gettid(), kind, api,
	       (unsigned long long)(uintptr_t)p, bytes, extra ? extra : "");
	fflush(stdout);
	pthread_mutex_unlock(&gp_log_mu);
}

/* Call BEFORE the freeing call. Returns the bytes that were allocated. */
static inline unsigned long long gp_log_free(const char *api, const void *p, const char *extra)
{
	pthread_mutex_lock(&gp_log_mu);
	int slot = -1;
	for (int i = 0; i < GP_MAX_LIVE; i++)
		if (gp_live_tab[i].used && gp_live_tab[i].addr == (uintptr_t)p) {
			slot = i;
			break;
		}
	if (slot < 0) {
		fprintf(stderr, "sample bug: free of unknown %p\n", p);
		exit(1);
	}
	struct gp_live *l = &gp_live_tab[slot];
	struct gp_kind_tally *t = gp_tally_for(l->kind);
	t->frees++;
	t->free_bytes += l->bytes;
	printf("GPUPROF_FREE seq=%llu t_ms=%lld tid=%ld device=0 kind=%s api=%s addr=0x%llx bytes=%llu%s\n",
	       ++gp_seq, gp_t_ms(), gp_gettid(), l->kind, api,
	       (unsigned long long)(uintptr_t)p, l->bytes, extra ? extra : "");
	fflush(stdout);
	unsigned long long b = l->bytes;
	l->used = 0;
	pthread_mutex_unlock(&gp_log_mu);
	return b;
}

static inline void gp_log_oom(const char *api, unsigned long long bytes, cudaError_t e,
		       size_t free_b, size_t total_b)
{
	pthread_mutex_lock(&gp_log_mu);
	gp_oom_count++;
	printf("GPUPROF_OOM t_ms=%lld tid=%ld api=%s bytes=%llu device=0 result=%d error=%s free=%llu total=%llu\n",
	       gp_t_ms(), gp_gettid(), api, bytes, (int)e, cudaGetErrorName(e),
	       (unsigned long long)free_b, (unsigned long long)total_b);
	fflush(stdout);
	pthread_mutex_unlock(&gp_log_mu);
}

static inline void gp_log_memcpy(const char *dir, unsigned long long bytes, int async, const char *stream)
{
	pthread_mutex_lock(&gp_log_mu);
	gp_n_memcpy++;
	gp_b_memcpy += bytes;
	printf("GPUPROF_OP t_ms=%lld tid=%ld op=memcpy dir=%s bytes=%llu async=%d stream=%s\n",
	       gp_t_ms(), gp_gettid(), dir, bytes, async, stream);
	fflush(stdout);
	pthread_mutex_unlock(&gp_log_mu);
}

static inline void gp_log_memset(unsigned long long bytes, int value, int async, const char *stream)
{
	pthread_mutex_lock(&gp_log_mu);
	gp_n_memset++;
	gp_b_memset += bytes;
	printf("GPUPROF_OP t_ms=%lld tid=%ld op=memset bytes=%llu value=%d async=%d stream=%s\n",
	       gp_t_ms(), gp_gettid(), bytes, value, async, stream);
	fflush(stdout);
	pthread_mutex_unlock(&gp_log_mu);
}

static inline void gp_log_kernel(const char *name, dim3 g, dim3 b, const char *stream)
{
	pthread_mutex_lock(&gp_log_mu);
	gp_n_kernel++;
	printf("GPUPROF_OP t_ms=%lld tid=%ld op=kernel name=%s grid=%u,%u,%u block=%u,%u,%u stream=%s\n",
	       gp_t_ms(), gp_gettid(), name, g.x, g.y, g.z, b.x, b.y, b.z, stream);
	fflush(stdout);
	pthread_mutex_unlock(&gp_log_mu);
}

/* Summary lines: per kind (what was allocated/freed so far and what is live),
 * the operation totals if any were logged, the OOM count. */
static inline void gp_print_summary(void)
{
	pthread_mutex_lock(&gp_log_mu);
	long long t = gp_t_ms();
	for (int i = 0; i < GP_MAX_KINDS && gp_tally[i].kind; i++) {
		struct gp_kind_tally *k = &gp_tally[i];
		printf("GPUPROF_EXPECT kind=%s allocs=%llu frees=%llu alloc_bytes=%llu free_bytes=%llu live_end=%llu t_ms=%lld\n",
		       k->kind, k->allocs, k->frees, k->alloc_bytes, k->free_bytes,
		       k->alloc_bytes - k->free_bytes, t);
		printf("%s: %s: %llu allocations (%llu bytes), %llu frees (%llu bytes), %llu bytes live\n",
		       gp_sample_name, k->kind, k->allocs, k->alloc_bytes, k->frees,
		       k->free_bytes, k->alloc_bytes - k->free_bytes);
	}
	if (gp_n_memcpy || gp_n_memset || gp_n_kernel) {
		printf("GPUPROF_EXPECT ops memcpy=%llu memcpy_bytes=%llu memset=%llu memset_bytes=%llu kernels=%llu\n",
		       gp_n_memcpy, gp_b_memcpy, gp_n_memset, gp_b_memset, gp_n_kernel);
		printf("%s: %llu copies (%llu bytes), %llu sets (%llu bytes), %llu kernels\n",
		       gp_sample_name, gp_n_memcpy, gp_b_memcpy, gp_n_memset, gp_b_memset, gp_n_kernel);
	}
	if (gp_oom_count)
		printf("GPUPROF_EXPECT oom count=%llu\n", gp_oom_count);
	fflush(stdout);
	pthread_mutex_unlock(&gp_log_mu);
}

static inline int gp_end(void)
{
	gp_print_summary();
	printf("GPUPROF_EXPECT exit=normal\n");
	printf("GPUPROF_END sample=%s\n", gp_sample_name);
	fflush(stdout);
	return 0;
}

/* Lower-case hex of n bytes into out (2n+1 bytes). */
static inline void gp_hex(const char *s, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[(unsigned char)s[i] >> 4];
		out[2 * i + 1] = d[(unsigned char)s[i] & 15];
	}
	out[2 * n] = 0;
}

static inline void gp_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0) {
	}
}

#endif
