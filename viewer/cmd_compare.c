/* gpuprof compare: the peak memory of two runs, a gate for CI. This file
 * reads the command line; the work is in viewer/compare/ (compare.h). */
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "compare/compare.h"
#include "compare/options.h"
#include "cli.h"

#define PROG "gpuprof compare"

enum { OPT_BASE = 'b', OPT_NEW = 'N', OPT_MAX = 'i' };

static const struct option long_options[] = {
	{ "base", required_argument, NULL, OPT_BASE },
	{ "new", required_argument, NULL, OPT_NEW },
	{ "max-increase", required_argument, NULL, OPT_MAX },
	GP_CMP_COMMON_LONG_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int compare_main(int argc, char **argv)
{
	struct gp_cmp_settings s = { .prog = PROG, .device = -1, .top = 5, .out = stdout };
	const char **base = calloc((size_t)argc, sizeof(*base));
	const char **new_ = calloc((size_t)argc, sizeof(*new_));
	const char **ops = calloc((size_t)argc, sizeof(*ops));
	size_t nbase = 0, nnew = 0, nops = 0;
	int c, prev, status = GP_CMP_BAD;

	if (!base || !new_ || !ops) {
		fputs(PROG ": out of memory\n", stderr);
		goto cleanup;
	}
	/* '-': operands and options in any order, whatever POSIXLY_CORRECT says */
	while ((prev = optind, c = getopt_long(argc, argv, "-:h", long_options, NULL)) != -1) {
		int rc;

		switch (c) {
		case 1:
		case OPT_BASE:
		case OPT_NEW:
			if (!*optarg) {
				status = gp_cmp_usage(PROG, "an empty file name");
				goto cleanup;
			}
			if (c == 1)
				ops[nops++] = optarg;
			else if (c == OPT_BASE)
				base[nbase++] = optarg;
			else
				new_[nnew++] = optarg;
			break;
		case OPT_MAX:
			if (gp_cmp_limit_option(PROG, "--max-increase", optarg, &s.limit, 1))
				goto cleanup;
			break;
		case 'h':
			gp_print_command_help(&gp_cmd_compare);
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
	/* operands fill the sides that no --base/--new gave, BASE first */
	if (!nbase && !nnew && nops == 2) {
		base[nbase++] = ops[0];
		new_[nnew++] = ops[1];
	} else if (nbase && !nnew && nops == 1) {
		new_[nnew++] = ops[0];
	} else if (!nbase && nnew && nops == 1) {
		base[nbase++] = ops[0];
	} else if (!(nbase && nnew && !nops)) {
		size_t want = (size_t)!nbase + (size_t)!nnew;
		const char *extra = want == 2 ? "more than two operands" :
				    want == 1 ? "more than one operand" : "an operand beside --base and --new";
		const char *missing = !nbase && !nnew && !nops ? "BASE and NEW" : !nbase && !nops ? "BASE" : "NEW";

		if (nops > want)
			status = gp_cmp_usage(PROG, "%s: give the files of a side with --base/--new, or as a "
					      "directory", extra);
		else
			status = gp_cmp_usage(PROG, "missing %s", missing);
		goto cleanup;
	}
	if (!s.limit.has_percent && !s.limit.has_bytes) {
		gp_cmp_default_limit(&s.limit);
	}
	s.base.paths = base;
	s.base.n = nbase;
	s.new_.paths = new_;
	s.new_.n = nnew;
	s.progress = isatty(STDERR_FILENO);
	status = gp_cmp_compare(&s);
cleanup:
	free(base);
	free(new_);
	free(ops);
	return status;
}

const struct gp_command gp_cmd_compare = {
	.name = "compare",
	.summary = "did a change make a run's peak GPU memory grow? (a CI gate)",
	.usage = "  gpuprof compare BASE NEW [--max-increase N%|SIZE]... [--metric M] [--format F]\n"
		 "                  [--device N] [--top N] [--allow-oom]\n"
		 "  gpuprof compare --base FILE [--base FILE]... --new FILE [--new FILE]... [...]\n",
	.options =
		"  BASE, NEW              one run each: a summary (gpuprof analyze --json), a\n"
		"                         trace (the traces of its child processes beside it,\n"
		"                         RUN.PID.json.gz, come with it), or a directory of them\n"
		"  --base FILE, --new FILE\n"
		"                         the files of a side one by one (repeat it); the side\n"
		"                         not given so may be the one operand\n"
		"  --max-increase N%|SIZE fail when a GPU's peak grew by more than N% of BASE's\n"
		"                         or by more than SIZE (256MiB, 500MB); given both, only\n"
		"                         when over both (default: 1% and 2MiB)\n"
		GP_CMP_HELP_SIZE
		"  --metric M             peak: what analyze calls the peak (allocated memory;\n"
		"                         reserved in native mode; the default), peak-allocated,\n"
		"                         or peak-reserved (noisy: tensor mode's pool and native\n"
		"                         mode's sampled allocated moved 10-14% between runs)\n"
		"  --format F             text (default), json (schema gpuprof.compare/1) or\n"
		"                         markdown (a PR comment, $GITHUB_STEP_SUMMARY)\n"
		"  --device N             GPU N of each process only\n"
		"  --top N                rows of each table of what changed (default 5)\n"
		"  --allow-oom            pass a NEW whose program did not get past an out-of-\n"
		"                         memory error (else it fails, whatever its peak)\n"
		"  -h, --help             this help\n"
		"  Processes are matched by rank and device where both runs know the rank,\n"
		"  else by device and command line, else by device alone; a GPU of BASE that\n"
		"  NEW lacks fails, one only in NEW is shown (viewer/compare/README.md).\n",
	.examples =
		"  gpuprof compare baseline.json summary.json\n"
		"      exit 1 when a GPU's peak grew by more than 1% and 2 MiB; what grew, by\n"
		"      category, layer and allocation\n"
		"  gpuprof compare baseline.json summary.json --format markdown >> \"$GITHUB_STEP_SUMMARY\"\n"
		"      the same as a table for a CI job summary or a PR comment\n"
		"  gpuprof compare base/ new/ --max-increase 256MiB\n"
		"      two run directories (gpuprof --trace -o RUN/): rank against rank\n"
		"  gpuprof compare --base r0.json --base r1.json --new n0.json --new n1.json\n"
		"      summaries made one per process\n",
	.exit_status =
		"  0 within the limit, 1 a regression, or NEW's program did not get past an\n"
		"  out-of-memory error (without --allow-oom), 2 bad usage or bad input, or no verdict\n"
		"  (runs that cannot be compared: different kinds of peak, a metric not known)\n",
	.run = compare_main,
};
