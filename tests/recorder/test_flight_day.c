/* The flight recorder (profiler/flight.c: ring, window head, outline
 * together) driven by a synthetic training job at a GPU job's pace for the
 * equivalent of a day (--hours N [--sanitized]: fewer, for the sanitizers'
 * builds, whose resident memory is their quarantine's): 14
 * steps a second, each with module ranges, blocks made and freed, GPU work
 * and a step mark, a block kept every ten thousand steps; the writer's ticks
 * every 250 ms of the job's clock.
 *
 * Asserted: the recorder's memory (the process's resident set, sampled
 * every hour) stays bounded once the window is full; the trace's file
 * grows by the outline alone (bytes a step bounded; under 1 GB a day); at
 * the end it is one gzip member holding one outline event a step, the
 * window's events, a dump and an end. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "flight.h"
#include "testutil.h"
#include "trace_format.h"
#include "trace_writer.h"

#define STEPS_PER_S 14
#define TICK_MS 250
#define WINDOW_S 60
/* modules a step: few, so that a day of steps runs in a CI's minute */
#define LAYERS 1

static struct gp_trace_writer *tw;
static int64_t ts_ns = 1000000000;

static void alloc_ev(const char *name, uint64_t addr, uint64_t bytes)
{
	gp_tw_begin(tw, GP_PH_TORCH_ALLOC, name, GP_CAT_MEMORY, 1, 1, ts_ns += 1000);
	gp_tw_field_str(tw, GP_T_S, "t");
	gp_tw_args_begin(tw);
	gp_tw_arg_hex(tw, GP_F_ADDR, addr);
	gp_tw_arg_u64(tw, GP_F_BYTES, bytes);
	gp_tw_arg_u64(tw, GP_F_DEVICE, 0);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
}

static void range_ev(char ph, const char *name)
{
	gp_tw_begin(tw, ph, name, GP_CAT_NVTX, 1, 1, ts_ns += 500);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
}

static void kernel_ev(void)
{
	gp_tw_begin(tw, 'X', "gemm_bf16_128x128", GP_CAT_KERNEL, 1000000001, 7, ts_ns += 300);
	gp_tw_dur(tw, 5000);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
}

static uint64_t resident_kb(void)
{
	char line[256];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtoull(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

static uint64_t file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Outline events and whole lines in the finished file, read by zlib. */
static void read_back(const char *path, uint64_t *outlines, int *whole)
{
	gzFile g = gzopen(path, "rb");
	static char line[1 << 16];
	char needle[64];

	snprintf(needle, sizeof(needle), "\"name\":\"%s\"", GP_EV_OUTLINE);
	*outlines = 0;
	*whole = 0;
	CHECK(g != NULL);
	while (gzgets(g, line, sizeof(line))) {
		if (strstr(line, needle))
			(*outlines)++;
		if (!strcmp(line, "]\n"))
			*whole = 1;
	}
	gzclose(g);
}

int main(int argc, char **argv)
{
	int hours = argc > 2 && !strcmp(argv[1], "--hours") ? atoi(argv[2]) : 24;
	/* a sanitizer's quarantine holds freed memory: resident says nothing */
	int sanitized = argc > 3 && !strcmp(argv[3], "--sanitized");
	const uint64_t steps = (uint64_t)hours * 3600 * STEPS_PER_S;
	struct gp_flight_when when = { 0 };
	struct gp_flight *f;
	char dir[4096], path[4200], name[64];
	uint64_t kept = 0, next_tick_ms = TICK_MS, rss_at_hour1 = 0, most_rss = 0, outlines;
	int fd, whole;

	tu_mkdtemp(dir, "flight_day");
	snprintf(path, sizeof(path), "%s/day.json.gz", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(gp_flight_new(&f, fd, path, 1, WINDOW_S, (size_t)256 << 20, &when, &tw), 0);
	gp_tw_begin(tw, GP_PH_META, GP_EV_META, GP_CAT_GPUPROF, 1, 0, 0);
	gp_tw_field_str(tw, GP_T_S, "g");
	gp_tw_args_begin(tw);
	gp_tw_arg_u64(tw, GP_F_FORMAT, 1);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	for (int i = 0; i < 16; i++) /* the parameters */
		alloc_ev(GP_EV_TORCH_ALLOC, 0x7a0000000000ull + (uint64_t)i * 0x100000, 1 << 20);
	for (uint64_t s = 1; s <= steps; s++) {
		uint64_t base = 0x7f0000000000ull, now_ms = s * 1000 / STEPS_PER_S;

		range_ev('B', "fwd:<Net>");
		for (int l = 0; l < LAYERS; l++) {
			snprintf(name, sizeof(name), "fwd:layer.%d", l);
			range_ev('B', name);
			alloc_ev(GP_EV_TORCH_ALLOC, base + (uint64_t)l * 0x1000000, 4 << 20);
			kernel_ev();
			range_ev('E', "");
		}
		range_ev('E', "");
		for (int l = 0; l < LAYERS; l++)
			alloc_ev(GP_EV_TORCH_FREE, base + (uint64_t)l * 0x1000000, 4 << 20);
		if (s % 10000 == 0) /* kept: a slow leak's block */
			alloc_ev(GP_EV_TORCH_ALLOC, 0x7c0000000000ull + kept++ * 0x10000, 4096);
		snprintf(name, sizeof(name), "step:%llu", (unsigned long long)s);
		gp_tw_begin(tw, GP_PH_NVTX_MARK, name, GP_CAT_NVTX, 1, 1, ts_ns = (int64_t)now_ms * 1000000);
		gp_tw_field_str(tw, GP_T_S, "t");
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		while (now_ms >= next_tick_ms) {
			gp_flight_tick(f, next_tick_ms, (int64_t)next_tick_ms * 1000000);
			next_tick_ms += TICK_MS;
		}
		if (s % (3600 * STEPS_PER_S) == 0) {
			uint64_t rss = resident_kb();

			if (!rss_at_hour1)
				rss_at_hour1 = rss;
			if (rss > most_rss)
				most_rss = rss;
			/* the file holds the meta and the outline: a few hundred
			 * bytes a step at most */
			CHECK(file_bytes(path) < s * 200 + (1 << 20));
		}
	}
	printf("%d hours, %llu steps: resident %llu KiB after an hour, at most %llu KiB; the file %llu bytes "
	       "(%.1f a step) before the end\n",
	       hours, (unsigned long long)steps, (unsigned long long)rss_at_hour1, (unsigned long long)most_rss,
	       (unsigned long long)file_bytes(path), (double)file_bytes(path) / (double)steps);
	/* bounded: the window's ring, the live set's head and the outline's
	 * state are full after the first hour (the kept blocks add a few KiB) */
	CHECK(sanitized || most_rss <= rss_at_hour1 + 16 * 1024);
	CHECK(file_bytes(path) < (uint64_t)hours * (1000ull << 20) / 24);
	{
		static const char end[] = "{\"ph\":\"i\",\"name\":\"gpuprof.end\",\"cat\":\"gpuprof\",\"pid\":1,\"tid\":0,"
					  "\"ts\":0.000,\"s\":\"g\",\"args\":{}}";

		CHECK_EQ_INT(gp_flight_end(f, steps * 1000 / STEPS_PER_S + 1, ts_ns + 1, end, sizeof(end) - 1), 0);
	}
	gp_tw_close(tw, NULL);
	gp_flight_free(f);
	read_back(path, &outlines, &whole);
	CHECK(whole);
	CHECK(outlines == steps + 1); /* a step each, and the end's */
	printf("the end: %llu bytes, %llu outline events\n", (unsigned long long)file_bytes(path),
	       (unsigned long long)outlines);
	return CHECK_DONE();
}
