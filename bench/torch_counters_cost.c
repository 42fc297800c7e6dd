/* What drawing PyTorch's allocator history as a counter track costs the
 * recorder's writer at the program's exit (profiler/torch_counters.c,
 * host_decode.c): N history points in marks of ~60 kB, as
 * gpuprof_history.py writes them, written as the marks alone and as the
 * marks plus their counter events, through the trace writer at the
 * recorder's gzip level (1) into a file. Prints µs per point; best of 3.
 *
 *   bench_torch_counters [POINTS] [FILE]   (1000000, /tmp/gpuprof-tc.json.gz) */
#include "torch_counters.h"
#include "trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct gp_trace_writer *tw;

static void emit(void *ctx, enum gp_tc_track t, const struct gp_tc_point *p)
{
	(void)ctx;
	gp_tw_begin(tw, 'C', gp_tc_names[t], "memory", 1000012300, 0, p->ts);
	gp_tw_args_begin(tw);
	gp_tw_arg_u64(tw, "allocated", p->allocated);
	gp_tw_arg_u64(tw, "reserved", p->reserved);
	gp_tw_end(tw);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Seconds to write `points` points as marks, with their counters if draw. */
static double one(long points, const char *path, int draw, long *marks)
{
	struct gp_torch_counters tc;
	struct gp_tw_stats st;
	char *buf = malloc(70000);
	long done = 0;
	double t0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (!buf || fd < 0 || gp_tw_open_fd(&tw, fd, 1) != 0) {
		fprintf(stderr, "bench_torch_counters: cannot write %s\n", path);
		exit(1);
	}
	gp_tc_init(&tc);
	tc.max_history_points = (uint64_t)points;
	*marks = 0;
	t0 = now();
	while (done < points) {
		/* GPT-2-like values: ~13 GB allocated moving by MiBs, 15 GB reserved */
		int n = sprintf(buf, "gpuprof:torch.history {\"device\": 0, \"part\": %ld, \"last\": %s, "
				"\"complete\": true, \"t0_us\": %lld, \"p\": [", *marks, "false",
				1763820000000000ll + done * 3);
		for (int first = 1; n < 60000 && done < points; first = 0, done++)
			n += sprintf(buf + n, "%s3, %llu, 15286140928", first ? "" : ", ",
				     13000000000ull + (unsigned long long)(done % 1000) * 1048576);
		n += sprintf(buf + n, "], \"unix_ns\": 1763820005000000000}");
		gp_tw_begin_n(tw, 'i', buf, (size_t)n, "nvtx", 1, 1, 5000000000ll);
		gp_tw_end(tw);
		if (draw && gp_tc_mark(&tc, buf, (size_t)n, 5000000000ll, emit, NULL) != 1) {
			fprintf(stderr, "bench_torch_counters: a mark did not parse\n");
			exit(1);
		}
		(*marks)++;
	}
	if (gp_tw_close(tw, &st) != 0) {
		fprintf(stderr, "bench_torch_counters: writing %s failed\n", path);
		exit(1);
	}
	free(buf);
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 2 ? argv[2] : "/tmp/gpuprof-tc.json.gz";
	double best[2] = { 1e9, 1e9 };
	char *end = NULL;
	long points = 1000000, marks = 0;

	errno = 0;
	if (argc > 1)
		points = strtol(argv[1], &end, 10);
	if (errno || points <= 0 || (end && (end == argv[1] || *end))) {
		fprintf(stderr, "usage: bench_torch_counters [POINTS>0] [FILE]\n");
		return 2;
	}
	for (int round = 0; round < 3; round++)
		for (int draw = 0; draw < 2; draw++) {
			double s = one(points, path, draw, &marks);
			if (s < best[draw])
				best[draw] = s;
		}
	printf("TORCH_COUNTERS points=%ld marks=%ld marks_only_s=%.3f with_counters_s=%.3f "
	       "counters_us_per_point=%.3f\n", points, marks, best[0], best[1],
	       (best[1] - best[0]) * 1e6 / (double)points);
	return 0;
}
