/* libFuzzer target for gpuprof recover (exporters/trace_recover.h): any
 * bytes as a trace to repair, into a new file and in place. Must never
 * crash, hang, leak or read out of bounds; where it repairs, its output is
 * one complete gzip member holding a JSON array (checked here); refusing
 * the input (-EINVAL) is the normal outcome.
 *
 * Built with clang and -DGPUPROF_FUZZ=ON (top-level CMakeLists.txt):
 *   ./fuzz_recover CORPUS SEEDS */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "trace_recover.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], in[96], out[96], place[96];

static int write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return 0;
	ok = !size || fwrite(data, 1, size, f) == size;
	return fclose(f) == 0 && ok;
}

/* The repair decompresses whole to a JSON array: anything else is a bug. */
static void check_output(const char *path)
{
	gzFile g = gzopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	int got;

	if (!g || !buf)
		abort();
	while ((got = gzread(g, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				abort();
			buf = b;
			cap *= 2;
		}
	}
	if (got < 0 || !gzeof(g))
		abort(); /* not one complete gzip member */
	gzclose(g);
	if (n < 4 || memcmp(buf, "[\n", 2) != 0 || memcmp(buf + n - 3, "\n]\n", 3) != 0)
		abort();
	free(buf);
}

/* in place: the repair replaces the file, a damaged original kept beside */
static void clean_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[400];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_recover_result res;

	if (!dir[0]) {
		/* in memory where there is a tmpfs: recover fsyncs what it writes */
		snprintf(dir, sizeof(dir), "%s/gpuprof-fuzz-recover-%ld",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			abort();
		snprintf(in, sizeof(in), "%s/in.json.gz", dir);
		snprintf(out, sizeof(out), "%s/out.json.gz", dir);
		snprintf(place, sizeof(place), "%s/place.json.gz", dir);
	}
	clean_dir();
	if (!write_file(in, data, size) || !write_file(place, data, size))
		return 0;
	if (gp_trace_recover(in, out, 0, &res) == 0)
		check_output(out);
	if (gp_trace_recover_in_place(place, &res) == 0 && !res.already_complete)
		check_output(place);
	return 0;
}
