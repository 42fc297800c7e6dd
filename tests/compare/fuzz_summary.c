/* libFuzzer target for the summary reader of compare and check: any bytes,
 * as a file given to them (a `gpuprof analyze --json` summary, or a trace:
 * they tell which by its content), through gp_cmp_check in every format and
 * gp_cmp_compare of the file with itself. Must never crash, hang, leak or
 * read out of bounds; refusing the input (GP_CMP_BAD) is the normal outcome.
 *
 * Built with clang and -DGPUPROF_FUZZ=ON (top-level CMakeLists.txt):
 *   ./fuzz_summary -close_fd_mask=2 CORPUS SEEDS
 * (-close_fd_mask=2: their one-line refusals on stderr, not the crashes) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	static char path[64];
	static const char *paths[1] = { path };
	static const enum gp_cmp_format fmts[] = { GP_CMP_TEXT, GP_CMP_JSON, GP_CMP_MARKDOWN };
	struct gp_cmp_settings s = { 0 };
	FILE *f;

	if (!sink) {
		/* in memory where there is a tmpfs: no disk in the loop */
		snprintf(path, sizeof(path), "%s/gpuprof-fuzz-summary-%ld.json",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
		sink = fopen("/dev/null", "w");
		if (!sink)
			return 0;
	}
	f = fopen(path, "wb");
	if (!f)
		return 0;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return 0;
	}
	fclose(f);
	s.prog = "fuzz";
	s.base.paths = paths;
	s.base.n = 1;
	s.new_.paths = paths;
	s.new_.n = 1;
	s.limit.has_percent = 1;
	s.limit.percent = 50;
	s.device = -1;
	s.top = 5;
	s.out = sink;
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		s.format = fmts[i];
		if (gp_cmp_check(&s) == GP_CMP_BAD)
			return 0;
	}
	s.format = GP_CMP_TEXT;
	gp_cmp_compare(&s);
	return 0;
}
