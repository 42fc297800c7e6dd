/* libFuzzer target for the trace reader: any bytes, as a trace, through
 * the whole analysis and both reports. Must never crash, hang, leak or read
 * out of bounds; refusing the input (GP_AN_BAD_INPUT) is the normal outcome.
 *
 * Built with clang and -DGPUPROF_FUZZ=ON (tests/analyze/CMakeLists.txt):
 *   ./fuzz_reader -max_len=65536 tests/analyze/bad
 * fuzz_corpus.c runs the same entry point over tests/analyze/bad/ with any
 * compiler, so the sanitizer build checks it in CI. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct gp_an_input in = { "fuzz", data, size };
	struct gp_an_settings s = { 0 };
	char err[512];

	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!sink)
		return 0;
	s.inputs = &in;
	s.n_inputs = 1;
	s.top = 5;
	s.device = -1;
	s.pid = -1;
	s.out = sink;
	s.json = 0;
	if (gp_an_run(&s, err, sizeof(err), NULL, NULL) == GP_AN_OK) {
		s.json = 1;
		gp_an_run(&s, err, sizeof(err), NULL, NULL);
	}
	return 0;
}
