/* Writes a synthetic trace for bench/analyze_speed.sh: a training loop of
 * STEPS steps of a 48-module model, each module call a few kernels (with
 * their launch API calls and flow events) and tensors, NVTX
 * forward/backward/phase ranges and step marks, in the mix and the disorder
 * of the recorder: CUPTI records a flush late and shuffled within each
 * 500 ms flush, a gpuprof.watermark after each flush, gzip level 1 flushed
 * with Z_FULL_FLUSH at each (so the reader's chunks are the recorder's).
 * What is alive at once does not depend on STEPS, so neither should the
 * analyzer's memory.
 *
 * Tensor mode (the default): the tensors are stream-ordered allocations and
 * frees (CUPTI's records, with their cudaMallocAsync/cudaFreeAsync calls and
 * "GPU memory" counter updates) from one pool that grows as needed.
 *
 * Native mode ("native"), as the recorder writes it with gpuprof's hook on
 * PyTorch's caching allocator: a torch.attach after the meta; the tensors
 * are the hook's torch.alloc/torch.free events (written at once, each with
 * a "PyTorch memory" counter update), blocks inside PyTorch's segments,
 * placed by a best-fit allocator per pool the way PyTorch's is (blocks of
 * 1 MiB or less in 2 MiB segments, others in 20 MiB ones or, past 10 MiB,
 * their own rounded to 2 MiB; a small saved tensor per module besides the
 * tensor mode's). Each segment is a cudaMalloc (its API call, CUDA's alloc
 * record and a "GPU memory" counter: CUPTI's, a flush late) and the hook's
 * torch.segment_alloc just after it; the segments are made as the first
 * step needs them and kept to the end, but for one given back mid-run
 * (torch.segment_free, cudaFree, CUDA's free) and made again the step
 * after, at the same address.
 *
 *   analyze_gen OUT.json.gz EVENTS [native]   (about EVENTS events; prints the count)
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PID 31337
#define GPU_PID (1000000000 + PID * 100)
#define MAIN_TID 31337
#define BWD_TID 31400
#define FLUSH_NS 500000000ll
#define MODULES 48
#define PARAMS_PER_MODULE 2

struct line {
	int64_t ts;
	int cupti; /* delivered a flush late */
	char *text;
};

static struct line *lines;
static size_t nlines, caplines;
static int64_t now_ns = 1000000;
static uint64_t corr, rng = 88172645463325252ull;
static uint64_t events;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void emit(int64_t ts, int cupti, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void emit(int64_t ts, int cupti, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (nlines == caplines) {
		caplines = caplines ? caplines * 2 : 65536;
		lines = realloc(lines, caplines * sizeof(*lines));
		if (!lines)
			abort();
	}
	lines[nlines].ts = ts;
	lines[nlines].cupti = cupti;
	lines[nlines].text = malloc((size_t)n + 1);
	if (!lines[nlines].text)
		abort();
	memcpy(lines[nlines].text, buf, (size_t)n + 1);
	nlines++;
}

#define US(ns) (long long)((ns) / 1000), (int)((ns) % 1000)

static const char *kernel_names[] = {
	"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
	"BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >("
	"at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::"
	"binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, "
	"at::native::gpu_kernel_impl_nocast<...>::{lambda(int)#1})",
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
	"segment_k_off_kernel__5x_cublas",
	"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
	"at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
	"std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
};

static void launch(int64_t tid)
{
	int64_t start = now_ns, k;
	uint64_t c = ++corr;

	/* about GPT-2's pace on an H100: a kernel every 50 us */
	now_ns += 50000;
	k = now_ns + 20000;
	emit(start, 1, "{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":%d,"
	     "\"tid\":%lld,\"ts\":%lld.%03d,\"dur\":4.000,\"args\":{\"corr\":%" PRIu64 "}}",
	     PID, (long long)tid, US(start), c);
	emit(start, 1, "{\"ph\":\"s\",\"name\":\"launch\",\"cat\":\"flow\",\"pid\":%d,\"tid\":%lld,"
	     "\"ts\":%lld.%03d,\"id\":%" PRIu64 "}", PID, (long long)tid, US(start), c);
	emit(k, 1, "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"kernel\",\"pid\":%d,\"tid\":7,"
	     "\"ts\":%lld.%03d,\"dur\":18.250,\"args\":{\"corr\":%" PRIu64 ",\"grid\":[120,4,1],"
	     "\"block\":[256,1,1],\"smem_static\":0,\"smem_dynamic\":49152,\"regs\":128}}",
	     kernel_names[rnd() % 4], GPU_PID, US(k), c);
	emit(k, 1, "{\"ph\":\"f\",\"name\":\"launch\",\"cat\":\"flow\",\"pid\":%d,\"tid\":7,"
	     "\"ts\":%lld.%03d,\"bp\":\"e\",\"id\":%" PRIu64 "}", GPU_PID, US(k), c);
	events += 4;
}

static uint64_t live_bytes, pool_size = 1ull << 30;

static void counter(int64_t ts)
{
	emit(ts, 1, "{\"ph\":\"C\",\"name\":\"GPU memory\",\"cat\":\"memory\",\"pid\":%d,\"tid\":0,"
	     "\"ts\":%lld.%03d,\"args\":{\"device\":%" PRIu64 ",\"device_static\":0,\"managed\":0,"
	     "\"pinned_host\":0,\"pool_reserved\":%" PRIu64 "}}", GPU_PID, US(ts), live_bytes, pool_size);
	events++;
}

static void mem(int alloc, uint64_t addr, uint64_t bytes, int64_t tid)
{
	int64_t start = now_ns, at;
	uint64_t c = ++corr;

	now_ns += 10000;
	at = start + 1500;
	if (alloc)
		live_bytes += bytes;
	else
		live_bytes -= bytes;
	while (live_bytes > pool_size)
		pool_size += 32u << 20;
	emit(at, 1, "{\"ph\":\"i\",\"name\":\"%s\",\"cat\":\"memory\",\"pid\":%d,\"tid\":7,"
	     "\"ts\":%lld.%03d,\"s\":\"t\",\"args\":{\"addr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 ","
	     "\"kind\":\"device\",\"device\":0,\"stream\":7,\"corr\":%" PRIu64 ",\"async\":true,"
	     "\"pool\":\"0x5ab0\",\"pool_type\":\"local\",\"pool_size\":%" PRIu64 ",\"pool_used\":%" PRIu64
	     "}}", alloc ? "alloc" : "free", GPU_PID, US(at), addr, bytes, c, pool_size, live_bytes);
	emit(start, 1, "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"cuda_runtime\",\"pid\":%d,"
	     "\"tid\":%lld,\"ts\":%lld.%03d,\"dur\":3.000,\"args\":{\"corr\":%" PRIu64 "}}",
	     alloc ? "cudaMallocAsync" : "cudaFreeAsync", PID, (long long)tid, US(start), c);
	counter(at);
	events += 2;
}

/* ---- native mode: PyTorch's caching allocator, seen by gpuprof's hook ---- */

#define SMALL_BLOCK (1ull << 20)   /* blocks of this or less: the small pool */
#define SMALL_SEGMENT (2ull << 20)
#define LARGE_SEGMENT (20ull << 20) /* for blocks under 10 MiB */
#define ROUND_LARGE (2ull << 20)

static int native;

struct blk {
	uint64_t off, size;
	int used;
};

struct seg {
	uint64_t addr, bytes;
	int pool, live; /* live 0: given back (its address is made again) */
	struct blk *b;
	size_t nb, capb;
};

static struct seg *segs;
static size_t nsegs, capsegs;
static uint64_t va_next = 0x7f0000000000ull, torch_allocated, torch_reserved, cuda_device;

static void torch_counter(int64_t ts)
{
	emit(ts, 0, "{\"ph\":\"C\",\"name\":\"PyTorch memory\",\"cat\":\"memory\",\"pid\":%d,\"tid\":0,"
	     "\"ts\":%lld.%03d,\"args\":{\"allocated\":%" PRIu64 ",\"reserved\":%" PRIu64 "}}",
	     GPU_PID, US(ts), torch_allocated, torch_reserved);
	events++;
}

static void cuda_counter(int64_t ts)
{
	emit(ts, 1, "{\"ph\":\"C\",\"name\":\"GPU memory\",\"cat\":\"memory\",\"pid\":%d,\"tid\":0,"
	     "\"ts\":%lld.%03d,\"args\":{\"device\":%" PRIu64 ",\"device_static\":0,\"managed\":0,"
	     "\"pinned_host\":0,\"pool_reserved\":0}}", GPU_PID, US(ts), cuda_device);
	events++;
}

static void blk_insert(struct seg *s, size_t at, struct blk b)
{
	if (s->nb == s->capb) {
		s->capb = s->capb ? s->capb * 2 : 8;
		s->b = realloc(s->b, s->capb * sizeof(*s->b));
		if (!s->b)
			abort();
	}
	memmove(&s->b[at + 1], &s->b[at], (s->nb - at) * sizeof(*s->b));
	s->b[at] = b;
	s->nb++;
}

static void blk_remove(struct seg *s, size_t at)
{
	memmove(&s->b[at], &s->b[at + 1], (s->nb - at - 1) * sizeof(*s->b));
	s->nb--;
}

/* PyTorch's cudaMalloc of a segment (CUPTI's records: the API call, CUDA's
 * allocation and its counter) and the hook's torch.segment_alloc just
 * after the call returns. A segment given back earlier of that size is
 * made again at its address, as the driver would. */
static struct seg *seg_make(uint64_t bytes, int pool, int64_t tid)
{
	int64_t start = now_ns, at = start + 100000;
	uint64_t c = ++corr;
	struct seg *s = NULL;

	for (size_t i = 0; i < nsegs && !s; i++)
		if (!segs[i].live && segs[i].bytes == bytes)
			s = &segs[i];
	if (!s) {
		if (nsegs == capsegs) {
			capsegs = capsegs ? capsegs * 2 : 64;
			segs = realloc(segs, capsegs * sizeof(*segs));
			if (!segs)
				abort();
		}
		s = &segs[nsegs++];
		memset(s, 0, sizeof(*s));
		s->addr = va_next;
		s->bytes = bytes;
		va_next += (bytes + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
	}
	s->pool = pool;
	s->live = 1;
	s->nb = 0;
	blk_insert(s, 0, (struct blk){ .off = 0, .size = bytes, .used = 0 });
	cuda_device += bytes;
	torch_reserved += bytes;
	emit(start, 1, "{\"ph\":\"X\",\"name\":\"cudaMalloc\",\"cat\":\"cuda_runtime\",\"pid\":%d,"
	     "\"tid\":%lld,\"ts\":%lld.%03d,\"dur\":150.000,\"args\":{\"corr\":%" PRIu64 "}}",
	     PID, (long long)tid, US(start), c);
	emit(at, 1, "{\"ph\":\"i\",\"name\":\"alloc\",\"cat\":\"memory\",\"pid\":%d,\"tid\":0,"
	     "\"ts\":%lld.%03d,\"s\":\"t\",\"args\":{\"addr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 ","
	     "\"kind\":\"device\",\"device\":0,\"stream\":-1,\"corr\":%" PRIu64 ",\"async\":false,"
	     "\"caller\":\"torch/lib/libc10_cuda.so\"}}", GPU_PID, US(at), s->addr, bytes, c);
	cuda_counter(at);
	now_ns += 155000;
	emit(now_ns, 0, "{\"ph\":\"i\",\"name\":\"torch.segment_alloc\",\"cat\":\"memory\",\"pid\":%d,"
	     "\"tid\":0,\"ts\":%lld.%03d,\"s\":\"t\",\"args\":{\"addr\":\"0x%" PRIx64 "\",\"bytes\":%"
	     PRIu64 ",\"device\":0,\"stream\":\"0x0\",\"mapped\":false}}", GPU_PID, US(now_ns), s->addr,
	     bytes);
	torch_counter(now_ns);
	events += 3;
	return s;
}

/* PyTorch gives a cached segment back (as empty_cache does): the hook's
 * torch.segment_free, then the cudaFree and CUDA's free record. */
static void seg_release(struct seg *s, int64_t tid)
{
	int64_t start = now_ns, call = start + 1500, at = start + 12000;
	uint64_t c = ++corr;

	s->live = 0;
	cuda_device -= s->bytes;
	torch_reserved -= s->bytes;
	emit(start, 0, "{\"ph\":\"i\",\"name\":\"torch.segment_free\",\"cat\":\"memory\",\"pid\":%d,"
	     "\"tid\":0,\"ts\":%lld.%03d,\"s\":\"t\",\"args\":{\"addr\":\"0x%" PRIx64 "\",\"bytes\":%"
	     PRIu64 ",\"device\":0,\"stream\":\"0x0\",\"mapped\":false}}", GPU_PID, US(start), s->addr,
	     s->bytes);
	torch_counter(start);
	emit(call, 1, "{\"ph\":\"X\",\"name\":\"cudaFree\",\"cat\":\"cuda_runtime\",\"pid\":%d,"
	     "\"tid\":%lld,\"ts\":%lld.%03d,\"dur\":200.000,\"args\":{\"corr\":%" PRIu64 "}}",
	     PID, (long long)tid, US(call), c);
	emit(at, 1, "{\"ph\":\"i\",\"name\":\"free\",\"cat\":\"memory\",\"pid\":%d,\"tid\":0,"
	     "\"ts\":%lld.%03d,\"s\":\"t\",\"args\":{\"addr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 ","
	     "\"kind\":\"device\",\"device\":0,\"stream\":-1,\"corr\":%" PRIu64 ",\"async\":false}}",
	     GPU_PID, US(at), s->addr, s->bytes, c);
	cuda_counter(at);
	now_ns += 205000;
	events += 3;
}

/* A block of bytes from its pool: the smallest free one that fits (the
 * lowest address among equals), split; a new segment where none does. */
static uint64_t blk_get(uint64_t bytes, int64_t tid)
{
	int pool = bytes > SMALL_BLOCK;
	struct seg *best = NULL;
	size_t bi = 0;

	for (size_t i = 0; i < nsegs; i++) {
		struct seg *s = &segs[i];

		if (!s->live || s->pool != pool)
			continue;
		for (size_t j = 0; j < s->nb; j++) {
			struct blk *b = &s->b[j];

			if (b->used || b->size < bytes)
				continue;
			if (!best || b->size < best->b[bi].size ||
			    (b->size == best->b[bi].size && s->addr + b->off < best->addr + best->b[bi].off)) {
				best = s;
				bi = j;
			}
		}
	}
	if (!best) {
		uint64_t sz = !pool ? SMALL_SEGMENT : bytes < (10ull << 20) ? LARGE_SEGMENT
					: (bytes + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);

		best = seg_make(sz, pool, tid);
		bi = 0;
	}
	if (best->b[bi].size > bytes)
		blk_insert(best, bi + 1, (struct blk){ .off = best->b[bi].off + bytes,
						       .size = best->b[bi].size - bytes, .used = 0 });
	best->b[bi].size = bytes;
	best->b[bi].used = 1;
	return best->addr + best->b[bi].off;
}

/* The block at addr back to its segment's free space, merged with its free
 * neighbours; its size. */
static uint64_t blk_put(uint64_t addr)
{
	for (size_t i = 0; i < nsegs; i++) {
		struct seg *s = &segs[i];

		if (!s->live || addr < s->addr || addr >= s->addr + s->bytes)
			continue;
		for (size_t j = 0; j < s->nb; j++) {
			uint64_t size;

			if (s->addr + s->b[j].off != addr)
				continue;
			if (!s->b[j].used)
				abort();
			size = s->b[j].size;
			s->b[j].used = 0;
			if (j + 1 < s->nb && !s->b[j + 1].used) {
				s->b[j].size += s->b[j + 1].size;
				blk_remove(s, j + 1);
			}
			if (j > 0 && !s->b[j - 1].used) {
				s->b[j - 1].size += s->b[j].size;
				blk_remove(s, j);
			}
			return size;
		}
	}
	abort(); /* not a block: the generator's mistake */
}

/* The hook's torch.alloc or torch.free, written at once, and PyTorch's
 * counters after it. */
static void torch_event(int alloc, uint64_t addr, uint64_t bytes, uint64_t requested, int64_t tid)
{
	int64_t at = now_ns + 1500;

	now_ns += 10000;
	if (alloc)
		torch_allocated += bytes;
	else
		torch_allocated -= bytes;
	emit(at, 0, "{\"ph\":\"i\",\"name\":\"%s\",\"cat\":\"memory\",\"pid\":%d,\"tid\":%lld,"
	     "\"ts\":%lld.%03d,\"s\":\"t\",\"args\":{\"addr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 ","
	     "\"requested\":%" PRIu64 ",\"device\":0,\"stream\":\"0x0\"}}",
	     alloc ? "torch.alloc" : "torch.free", PID, (long long)tid, US(at), addr, bytes, requested);
	torch_counter(at);
	events++;
}

/* A tensor of `requested` bytes: tensor mode's at addr, native mode's where
 * PyTorch's allocator puts it (rounded up to 512 bytes, as it rounds).
 * Returns its address. */
static uint64_t t_alloc(uint64_t addr, uint64_t requested, int64_t tid)
{
	uint64_t bytes = (requested + 511) & ~511ull;

	if (!native) {
		mem(1, addr, requested, tid);
		return addr;
	}
	addr = blk_get(bytes, tid);
	torch_event(1, addr, bytes, requested, tid);
	return addr;
}

static void t_free(uint64_t addr, uint64_t requested, int64_t tid)
{
	if (!native) {
		mem(0, addr, requested, tid);
		return;
	}
	torch_event(0, addr, blk_put(addr), requested, tid);
}

/* Mid-run, one cached segment given back (the newest of the large pool
 * with no block in use); the next step makes it again. */
static void release_one(int64_t tid)
{
	for (size_t i = nsegs; i > 0; i--) {
		struct seg *s = &segs[i - 1];

		if (s->live && s->pool && s->nb == 1 && !s->b[0].used) {
			seg_release(s, tid);
			return;
		}
	}
}

static void nvtx(char ph, const char *name, int64_t tid, uint64_t id)
{
	now_ns += 2000;
	if (ph == 'B')
		emit(now_ns, 0, "{\"ph\":\"B\",\"name\":\"%s\",\"cat\":\"nvtx\",\"pid\":%d,\"tid\":%lld,"
		     "\"ts\":%lld.%03d,\"args\":{\"domain\":\"default\"}}", name, PID, (long long)tid,
		     US(now_ns));
	else if (ph == 'E')
		emit(now_ns, 0, "{\"ph\":\"E\",\"name\":\"\",\"cat\":\"nvtx\",\"pid\":%d,\"tid\":%lld,"
		     "\"ts\":%lld.%03d}", PID, (long long)tid, US(now_ns));
	else if (ph == 'b')
		emit(now_ns, 0, "{\"ph\":\"b\",\"name\":\"%s\",\"cat\":\"nvtx\",\"pid\":%d,\"tid\":%lld,"
		     "\"ts\":%lld.%03d,\"id\":%" PRIu64 ",\"args\":{\"domain\":\"default\"}}", name, PID,
		     (long long)tid, US(now_ns), id);
	else if (ph == 'e')
		emit(now_ns, 0, "{\"ph\":\"e\",\"name\":\"%s\",\"cat\":\"nvtx\",\"pid\":%d,\"tid\":%lld,"
		     "\"ts\":%lld.%03d,\"id\":%" PRIu64 "}", name, PID, (long long)tid, US(now_ns), id);
	else
		emit(now_ns, 0, "{\"ph\":\"i\",\"name\":\"%s\",\"cat\":\"nvtx\",\"pid\":%d,\"tid\":%lld,"
		     "\"ts\":%lld.%03d,\"s\":\"t\",\"args\":{\"domain\":\"default\"}}", name, PID,
		     (long long)tid, US(now_ns));
	events++;
}

static gzFile out;
static int64_t flushed_to; /* host events before this are written */
static int64_t last_wm;

static int by_ts(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Writes what the recorder would have by flush edge `edge`: host events
 * before it, CUPTI records before the previous edge, shuffled; then the
 * watermark, one flush behind. */
static void flush_to(int64_t edge, int final)
{
	size_t keep = 0, n = 0;
	struct line *batch = malloc(nlines * sizeof(*batch) + 1);

	if (!batch)
		abort();
	for (size_t i = 0; i < nlines; i++) {
		int go = final || (lines[i].cupti ? lines[i].ts < edge - FLUSH_NS : lines[i].ts < edge);

		if (go)
			batch[n++] = lines[i];
		else
			lines[keep++] = lines[i];
	}
	nlines = keep;
	if (final)
		qsort(batch, n, sizeof(*batch), by_ts);
	for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
		size_t j = rnd() % i;
		struct line t = batch[i - 1];

		if (final)
			break;
		batch[i - 1] = batch[j];
		batch[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		gzputs(out, batch[i].text);
		gzputs(out, ",\n");
		free(batch[i].text);
	}
	free(batch);
	if (!final) {
		int64_t wm = edge - FLUSH_NS;

		if (wm > last_wm) {
			gzprintf(out, "{\"ph\":\"i\",\"name\":\"gpuprof.watermark\",\"cat\":\"gpuprof\","
				 "\"pid\":%d,\"tid\":0,\"ts\":%lld.%03d,\"s\":\"g\"},\n", PID, US(wm));
			events++;
			last_wm = wm;
		}
		gzflush(out, Z_FULL_FLUSH); /* as the recorder's writer, each tick */
	}
	flushed_to = edge;
}

static void maybe_flush(void)
{
	while (now_ns > flushed_to + FLUSH_NS)
		flush_to(flushed_to + FLUSH_NS, 0);
}

int main(int argc, char **argv)
{
	uint64_t target, params[MODULES * PARAMS_PER_MODULE], addr = 0x7f0000000000ull;
	char name[64], torch_info[512];
	int step = 0, released = 0;

	if ((argc != 3 && (argc != 4 || strcmp(argv[3], "native"))) ||
	    (target = strtoull(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: analyze_gen OUT.json.gz EVENTS [native]\n");
		return 2;
	}
	native = argc == 4;
	out = gzopen(argv[1], "wb1");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	gzbuffer(out, 1 << 20);
	gzprintf(out, "[\n{\"ph\":\"i\",\"name\":\"gpuprof.meta\",\"cat\":\"gpuprof\",\"pid\":%d,\"tid\":0,"
		 "\"ts\":0.000,\"s\":\"g\",\"args\":{\"format\":1,\"version\":\"0.1.0\",\"pid\":%d,"
		 "\"ppid\":1,\"cmdline\":\"python3 bench.py\",\"hostname\":\"bench\","
		 "\"start_unix_ns\":1700000000000000000,\"ts_base_ns\":1700000000000000000,"
		 "\"clock\":\"cupti\",\"mode\":\"%s\",%s\"gpu_pid_base\":%d}},\n", PID, PID,
		 native ? "native" : "tensor",
		 native ? "\"record\":\"kernels,copies,api,launches,oom,nvtx,pools,statics,memory\","
			  "\"statics\":\"run\",\"memory_device\":\"context\",\"gz_flush\":\"full\","
			: "",
		 GPU_PID);
	gzprintf(out, "{\"ph\":\"i\",\"name\":\"gpuprof.device\",\"cat\":\"gpuprof\",\"pid\":%d,"
		 "\"tid\":0,\"ts\":0.000,\"s\":\"g\",\"args\":{\"device\":0,\"name\":\"Bench GPU\","
		 "\"total_memory\":85017493504,\"uuid\":\"GPU-bench\",\"cc\":\"9.0\",\"gpu_pid\":%d}},\n",
		 GPU_PID, GPU_PID);
	events = 2;
	if (native) {
		/* the hook attaches before PyTorch's first allocation */
		gzprintf(out, "{\"ph\":\"i\",\"name\":\"torch.attach\",\"cat\":\"memory\",\"pid\":%d,"
			 "\"tid\":0,\"ts\":%lld.%03d,\"s\":\"g\",\"args\":{\"device\":0,\"allocated\":0,"
			 "\"reserved\":0,\"stacks\":false}},\n", PID, US(now_ns));
		gzprintf(out, "{\"ph\":\"C\",\"name\":\"PyTorch memory\",\"cat\":\"memory\",\"pid\":%d,"
			 "\"tid\":0,\"ts\":%lld.%03d,\"args\":{\"allocated\":0,\"reserved\":0}},\n", GPU_PID,
			 US(now_ns));
		events += 2;
	}
	/* the Python hooks say PyTorch's version and settings as they start,
	 * as for every PyTorch program (without it a trace is a CUDA
	 * program's, analyzed again as one) */
	snprintf(torch_info, sizeof(torch_info),
		 "gpuprof:torch {\\\"alloc_conf\\\": \\\"%s\\\", \\\"backend\\\": \\\"%s\\\", "
		 "\\\"compiled_calls\\\": true, \\\"history\\\": false, \\\"mode\\\": \\\"%s\\\", "
		 "\\\"ops\\\": false, \\\"pid\\\": %d, \\\"stacks\\\": false, "
		 "\\\"torch\\\": \\\"2.11.0+cu130\\\"%s}",
		 native ? "" : "backend:cudaMallocAsync", native ? "native" : "cudaMallocAsync",
		 native ? "native" : "tensor", PID, native ? ", \\\"tracker\\\": \\\"on\\\"" : "");
	nvtx('i', torch_info, MAIN_TID, 0);
	/* parameters, made before the first forward, alive throughout */
	for (int i = 0; i < MODULES * PARAMS_PER_MODULE; i++) {
		params[i] = t_alloc(addr, 4u << 20, MAIN_TID);
		addr += 4u << 20;
	}
	while (events < target) {
		uint64_t acts[MODULES], saved[MODULES];

		step++;
		nvtx('B', "fwd:<GPT>", MAIN_TID, 0);
		for (int m = 0; m < MODULES; m++) {
			uint64_t tmp = addr + (uint64_t)m * (64u << 20), t;

			snprintf(name, sizeof(name), "fwd:h.%d.mlp", m);
			nvtx('B', name, MAIN_TID, 0);
			t = t_alloc(tmp, 8u << 20, MAIN_TID);
			launch(MAIN_TID);
			launch(MAIN_TID);
			acts[m] = t_alloc(tmp + (32u << 20), 16u << 20, MAIN_TID);
			/* native: a small tensor saved for backward (the small pool) */
			if (native)
				saved[m] = t_alloc(0, 6000, MAIN_TID);
			launch(MAIN_TID);
			t_free(t, 8u << 20, MAIN_TID);
			nvtx('E', "", MAIN_TID, 0);
			maybe_flush();
		}
		nvtx('E', "", MAIN_TID, 0);
		nvtx('B', "phase:backward", MAIN_TID, 0);
		for (int m = MODULES - 1; m >= 0; m--) {
			uint64_t g = addr + (uint64_t)m * (64u << 20) + (8u << 20);

			snprintf(name, sizeof(name), "bwd:h.%d.mlp", m);
			nvtx('b', name, BWD_TID, (uint64_t)step * 1000 + (uint64_t)m);
			g = t_alloc(g, 8u << 20, BWD_TID);
			launch(BWD_TID);
			launch(BWD_TID);
			t_free(acts[m], 16u << 20, BWD_TID);
			if (native)
				t_free(saved[m], 6000, BWD_TID);
			t_free(g, 8u << 20, BWD_TID);
			nvtx('e', name, MAIN_TID, (uint64_t)step * 1000 + (uint64_t)m);
			maybe_flush();
		}
		nvtx('E', "", MAIN_TID, 0);
		nvtx('B', "phase:optimizer.step", MAIN_TID, 0);
		for (int i = 0; i < MODULES; i++)
			launch(MAIN_TID);
		nvtx('E', "", MAIN_TID, 0);
		snprintf(name, sizeof(name), "step:%d", step);
		nvtx('i', name, MAIN_TID, 0);
		now_ns += 2000000;
		/* native: half way, one cached segment given back */
		if (native && !released && events >= target / 2) {
			release_one(MAIN_TID);
			released = 1;
		}
		maybe_flush();
	}
	(void)params;
	flush_to(now_ns + 2 * FLUSH_NS, 1);
	gzprintf(out, "{\"ph\":\"i\",\"name\":\"gpuprof.end\",\"cat\":\"gpuprof\",\"pid\":%d,\"tid\":0,"
		 "\"ts\":%lld.%03d,\"s\":\"g\",\"args\":{\"clean\":true,\"recovered\":false,"
		 "\"dropped_cupti\":0,\"dropped_host\":0,\"late_memory_records\":0}}\n]\n", PID, US(now_ns));
	events++;
	if (gzclose(out) != Z_OK) {
		fprintf(stderr, "analyze_gen: write failed\n");
		return 1;
	}
	printf("%" PRIu64 "\n", events);
	for (size_t i = 0; i < nsegs; i++)
		free(segs[i].b);
	free(segs);
	free(lines);
	return 0;
}
