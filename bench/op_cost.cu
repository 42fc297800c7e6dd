/* What the recorder costs the program per CUDA operation, in host time, with
 * nothing between the program and CUDA but gpuprof: a kernel launch, a
 * stream-ordered allocation and free (what PyTorch's tensor mode makes
 * thousands of a step), a memset, an NVTX push and pop, and two calls it
 * records nothing of (cudaGetDevice, cudaGetLastError). bench/launch_cost.py
 * measures the same through PyTorch, whose own 5-10 µs per operation and
 * their noise hide differences of a tenth of a microsecond; this does not.
 *
 *   op_cost [-r ROUNDS] [-n OPS] [VARIANT...]
 *   (built with the samples: <build>/samples/op_cost)
 *
 * VARIANT: the recorder's parts as gpuprof_bench_record takes them
 * (GPUPROF_RECORD's names plus memory and none), switched in this process;
 * or asis (the recorder as it started, or no recorder without gpuprof). The
 * first is the base. Leave out "all" and "pools" in tensor mode: CUPTI's pool
 * records cannot be switched back on (bench/launch_cost.py). There CUPTI's
 * memory records are on only with "statics" beside "memory" ("memory"
 * against "memory,statics" is what they cost).
 * Default: none memory memory,kernels memory,kernels,api,launches memory,nvtx.
 *
 * Each round runs every variant once, in an order that rotates by one each
 * round; within a variant, each operation is timed over OPS calls while the
 * GPU spins on a kernel queued before them, so that no call waits for the
 * GPU. Prints one OP_COST line per variant: for each operation the median
 * over rounds of the host µs per call, and its difference from the base.
 *
 * EXAMPLES
 *   gpuprof --trace --mode cuda -o t.json.gz ./op_cost
 *   gpuprof --trace --mode tensor -o t.json.gz ./op_cost none memory memory,api
 *   ./op_cost asis            # no recorder: the program alone */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_VARIANTS 16
#define MAX_ROUNDS 1000
#define MAX_OPS 900 /* below the ~1024 launches CUDA queues before a launch blocks */

/* OP_GET_DEVICE and OP_LAST_ERROR: calls gpuprof records nothing of, which
 * PyTorch makes many of per operation (what tracing costs every API call) */
enum op { OP_LAUNCH, OP_ALLOC_FREE, OP_MEMSET, OP_NVTX, OP_GET_DEVICE, OP_LAST_ERROR, NOPS };
static const char *const op_names[NOPS] = { "launch_us", "alloc_free_us", "memset_us", "nvtx_us",
					    "get_device_us", "last_error_us" };

struct settings {
	int rounds;
	int ops;
	int nvariants;
	const char *variants[MAX_VARIANTS];
};

typedef int (*record_fn)(const char *);

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "op_cost: %s: %s\n", #call, cudaGetErrorString(e_)); \
			return -EIO;                                                      \
		}                                                                         \
	} while (0)

__global__ void empty_kernel(void) {}

/* Keeps the GPU busy for about `ns`, so that the operations queued behind it
 * are timed on the host alone. */
__global__ void spin_kernel(long long ns)
{
	long long t0;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	for (;;) {
		long long t;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		if (t - t0 > ns)
			break;
	}
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: op_cost [-r ROUNDS] [-n OPS] [VARIANT...]\n"
	      "  -r ROUNDS  rounds, each running every variant once (default 30)\n"
	      "  -n OPS     calls timed per operation and variant (default 500, at most 900)\n"
	      "VARIANT: recorder parts for gpuprof_bench_record (e.g. none, memory,kernels), or asis\n"
	      "EXAMPLES\n"
	      "  gpuprof --trace --mode cuda -o t.json.gz ./op_cost\n"
	      "  gpuprof --trace --mode tensor -o t.json.gz ./op_cost none memory memory,api\n",
	      f);
}

/* One variant, one round: host µs per call of each operation into us[]. */
static int time_ops(const struct settings *s, cudaStream_t st, void **ptrs, void *buf, double *us)
{
	double t;
	long long spin = 200000 + (long long)s->ops * 4000; /* ns: longer than the queueing */

	spin_kernel<<<1, 1, 0, st>>>(spin);
	t = now_us();
	for (int i = 0; i < s->ops; i++)
		empty_kernel<<<1, 1, 0, st>>>();
	us[OP_LAUNCH] = (now_us() - t) / s->ops;
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(st));

	spin_kernel<<<1, 1, 0, st>>>(spin);
	t = now_us();
	for (int i = 0; i < s->ops; i++)
		CK(cudaMallocAsync(&ptrs[i], 4096 + (size_t)(i % 7) * 65536, st));
	for (int i = 0; i < s->ops; i++)
		CK(cudaFreeAsync(ptrs[i], st));
	us[OP_ALLOC_FREE] = (now_us() - t) / s->ops;
	CK(cudaStreamSynchronize(st));

	spin_kernel<<<1, 1, 0, st>>>(spin);
	t = now_us();
	for (int i = 0; i < s->ops; i++)
		CK(cudaMemsetAsync(buf, i & 0xff, 4096, st));
	us[OP_MEMSET] = (now_us() - t) / s->ops;
	CK(cudaStreamSynchronize(st));

	t = now_us();
	for (int i = 0; i < s->ops; i++) {
		nvtxRangePushA("op_cost.range");
		nvtxRangePop();
	}
	us[OP_NVTX] = (now_us() - t) / s->ops;

	int dev = 0;
	t = now_us();
	for (int i = 0; i < s->ops; i++)
		CK(cudaGetDevice(&dev));
	us[OP_GET_DEVICE] = (now_us() - t) / s->ops;

	t = now_us();
	for (int i = 0; i < s->ops; i++)
		CK(cudaGetLastError());
	us[OP_LAST_ERROR] = (now_us() - t) / s->ops;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = { "none", "memory", "memory,kernels",
						"memory,kernels,api,launches", "memory,nvtx" };
	struct settings s = { 30, 500, 0, { 0 } };
	cudaStream_t st = NULL;
	void **ptrs = NULL, *buf = NULL;
	double *res = NULL; /* [variant][op][round] */
	record_fn record = NULL;
	int opt, err = 0;

	while ((opt = getopt(argc, argv, "r:n:h")) != -1) {
		switch (opt) {
		case 'r':
			if (parse_int(optarg, 1, MAX_ROUNDS, &s.rounds)) {
				fprintf(stderr, "op_cost: -r takes 1 to %d\n", MAX_ROUNDS);
				return 2;
			}
			break;
		case 'n':
			if (parse_int(optarg, 1, MAX_OPS, &s.ops)) {
				fprintf(stderr, "op_cost: -n takes 1 to %d\n", MAX_OPS);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (s.nvariants == MAX_VARIANTS) {
			fprintf(stderr, "op_cost: at most %d variants\n", MAX_VARIANTS);
			return 2;
		}
		s.variants[s.nvariants++] = argv[i];
	}
	if (!s.nvariants)
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			s.variants[s.nvariants++] = defaults[i];
	res = (double *)calloc((size_t)s.nvariants * NOPS * s.rounds, sizeof(*res));
	ptrs = (void **)calloc((size_t)s.ops, sizeof(*ptrs));
	if (!res || !ptrs) {
		fprintf(stderr, "op_cost: out of memory\n");
		err = -ENOMEM;
		goto out;
	}
	{
		/* the pool keeps what is freed: no allocation waits for the driver */
		cudaMemPool_t pool;
		uint64_t keep = UINT64_MAX;
		int dev = 0;
		if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess ||
		    cudaMalloc(&buf, 4096) != cudaSuccess ||
		    cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess ||
		    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
			fprintf(stderr, "op_cost: CUDA setup failed: %s\n", cudaGetErrorString(cudaGetLastError()));
			err = -EIO;
			goto out;
		}
	}
	/* CUDA is up: the injected library, if any, is loaded */
	for (int v = 0; v < s.nvariants && !record; v++) {
		if (strcmp(s.variants[v], "asis") == 0)
			continue;
		const char *lib = getenv("CUDA_INJECTION64_PATH");
		void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
		record = h ? (record_fn)dlsym(h, "gpuprof_bench_record") : NULL;
		if (!record) {
			fprintf(stderr, "op_cost: variant %s needs `gpuprof --trace` (no gpuprof_bench_record)\n",
				s.variants[v]);
			err = -ENOENT;
			goto out;
		}
	}
	for (int r = -1; r < s.rounds; r++) { /* round -1 warms up */
		for (int k = 0; k < s.nvariants; k++) {
			int v = (k + (r < 0 ? 0 : r)) % s.nvariants;
			double us[NOPS];
			if (strcmp(s.variants[v], "asis") != 0 && (err = record(s.variants[v])) != 0) {
				fprintf(stderr, "op_cost: gpuprof_bench_record(%s) failed: %d\n", s.variants[v], err);
				goto out;
			}
			if ((err = time_ops(&s, st, ptrs, buf, us)) != 0)
				goto out;
			if (r >= 0)
				for (int o = 0; o < NOPS; o++)
					res[((size_t)v * NOPS + o) * s.rounds + r] = us[o];
		}
	}
	{
		double base[NOPS];
		for (int v = 0; v < s.nvariants; v++) {
			printf("OP_COST variant=%s", s.variants[v]);
			for (int o = 0; o < NOPS; o++) {
				double m = median(&res[((size_t)v * NOPS + o) * s.rounds], s.rounds);
				if (v == 0)
					base[o] = m;
				printf(" %s=%.3f(%+.3f)", op_names[o], m, m - base[o]);
			}
			printf(" rounds=%d ops=%d\n", s.rounds, s.ops);
		}
	}
out:
	if (buf)
		cudaFree(buf);
	if (st)
		cudaStreamDestroy(st);
	free(ptrs);
	free(res);
	return err ? 1 : 0;
}
