/* gpuprof check: one run's peak GPU memory against an absolute limit, a gate
 * for CI. This file reads the command line; the work is in viewer/compare/
 * (compare.h), which compare shares. */
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "compare/compare.h"
#include "compare/options.h"
#include "cli.h"

#define PROG "gpuprof check"

enum { OPT_MAX = 'x' };

static const struct option long_options[] = {
	{ "max-peak", required_argument, NULL, OPT_MAX },
	GP_CMP_COMMON_LONG_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int check_main(int argc, char **argv)
{
	struct gp_cmp_settings s = { .prog = PROG, .device = -1, .top = 5, .out = stdout };
	const char **traces = calloc((size_t)argc, sizeof(*traces));
	size_t n = 0;
	int c, prev, status = GP_CMP_BAD;

	if (!traces) {
		fputs(PROG ": out of memory\n", stderr);
		goto cleanup;
	}
	/* '-': TRACEs and options in any order, whatever POSIXLY_CORRECT says */
	while ((prev = optind, c = getopt_long(argc, argv, "-:h", long_options, NULL)) != -1) {
		int rc;

		switch (c) {
		case 1:
			if (!*optarg) {
				status = gp_cmp_usage(PROG, "an empty TRACE name");
				goto cleanup;
			}
			traces[n++] = optarg;
			break;
		case OPT_MAX:
			if (s.limit.has_percent || s.limit.has_bytes) {
				status = gp_cmp_usage(PROG, "--max-peak given twice");
				goto cleanup;
			}
			if (gp_cmp_limit_option(PROG, "--max-peak", optarg, &s.limit, 1))
				goto cleanup;
			if (s.limit.has_percent && s.limit.percent > 100) {
				status = gp_cmp_usage(PROG, "--max-peak %s: more than the GPU's memory",
						      optarg);
				goto cleanup;
			}
			break;
		case 'h':
			gp_print_command_help(&gp_cmd_check);
			status = GP_CMP_OK;
			goto cleanup;
		default:
			rc = gp_cmp_common_option(PROG, &s, c, optarg);
			if (rc < 0)
				status = gp_cmp_option_error(PROG, c, argv[prev]);
			if (rc)
				goto cleanup;
			break;
		}
	}
	if (!n) {
		status = gp_cmp_usage(PROG, "missing TRACE to check");
		goto cleanup;
	}
	if (!s.limit.has_percent && !s.limit.has_bytes) {
		status = gp_cmp_usage(PROG, "missing --max-peak: the limit to check against");
		goto cleanup;
	}
	s.base.paths = traces;
	s.base.n = n;
	s.progress = isatty(STDERR_FILENO);
	status = gp_cmp_check(&s);
cleanup:
	free(traces);
	return status;
}

const struct gp_command gp_cmd_check = {
	.name = "check",
	.summary = "was a run's peak GPU memory within a limit? (a CI gate)",
	.usage = "  gpuprof check TRACE... --max-peak SIZE|N% [--metric M] [--device N] [--format F]\n"
		 "                [--top N] [--allow-oom]\n",
	.options =
		"  TRACE                  a trace, a summary (gpuprof analyze --json) or a\n"
		"                         directory of them, as for compare: one run\n"
		"  --max-peak SIZE|N%     the limit for each process's GPU: a size (12GiB,\n"
		"                         80GB), or a share of the GPU's memory (90%);\n"
		"                         required\n"
		GP_CMP_HELP_SIZE
		"  --metric, --format, --device N\n"
		"                         as for compare (gpuprof compare --help)\n"
		"  --top N                layers shown for each GPU (default 5)\n"
		"  --allow-oom            pass a run whose program did not get past an out-of-\n"
		"                         memory error (else it fails, whatever its peak)\n"
		"  -h, --help             this help\n",
	.examples =
		"  gpuprof check run.json.gz --max-peak 12GiB\n"
		"      exit 1 when a GPU's peak went over 12 GiB: \"peak allocated on cuda:0\n"
		"      was 13.2 GiB, limit 12 GiB\", then the layers that held the most\n"
		"  gpuprof check summary.json --max-peak 90% --metric peak-reserved --device 0\n"
		"      PyTorch's reserved memory on GPU 0 within 90% of that GPU\n",
	.exit_status =
		"  0 every GPU's peak within the limit, 1 a peak over it, or a program that did\n"
		"  not get past an out-of-memory error (without --allow-oom), 2 bad usage or bad\n"
		"  input, or no verdict (the metric is not known for a run)\n",
	.run = check_main,
};
