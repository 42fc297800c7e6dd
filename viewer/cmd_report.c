/* gpuprof report: one offline HTML page that shows who holds the memory,
 * what grows and why it ran out; the work is in viewer/report/ (report.h). */
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "report/report.h"
#include "analyze/analyze.h"
#include "viewer/render/term.h"
#include "viewer/run/run.h"

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "base", required_argument, NULL, 'b' },
	{ "top", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int report_main(int argc, char **argv)
{
	struct gp_report_settings s = { .out = "report.html", .top = 20 };
	const char **run = calloc((size_t)argc, sizeof(*run));
	const char **base = calloc((size_t)argc, sizeof(*base));
	char err[1024], **run_paths = NULL, **base_paths = NULL;
	size_t nrun_paths = 0, nbase_paths = 0;
	long top = 20;
	int c, prev, status = GP_EXIT_USAGE;

	if (!run || !base) {
		gp_msg("out of memory");
		status = GP_EXIT_FAIL;
		goto cleanup;
	}
	/* '-': operands and options in any order, whatever POSIXLY_CORRECT says */
	while ((prev = optind, c = getopt_long(argc, argv, "-:o:fb:n:h", long_options, NULL)) != -1) {
		switch (c) {
		case 1:
		case 'b':
			if (!*optarg) {
				status = gp_usage_error("an empty file name");
				goto cleanup;
			}
			if (c == 1)
				run[s.nrun++] = optarg;
			else
				base[s.nbase++] = optarg;
			break;
		case 'o':
			if (!*optarg) {
				status = gp_usage_error("-o takes the page's file name");
				goto cleanup;
			}
			s.out = optarg;
			break;
		case 'f':
			s.force = 1;
			break;
		case 'n':
			if (gp_parse_number(optarg, 1, 1000, &top)) {
				status = gp_usage_error("--top takes a number from 1 to 1000, not '%s'", optarg);
				goto cleanup;
			}
			break;
		case 'h':
			gp_print_command_help(&gp_cmd_report);
			status = GP_EXIT_OK;
			goto cleanup;
		default:
			status = gp_option_error(c, argv[prev]);
			goto cleanup;
		}
	}
	if (!s.nrun) {
		status = gp_usage_error("missing TRACE (or an analyze --json summary) to report");
		goto cleanup;
	}
	/* a run directory stands for its traces */
	status = gp_cli_traces(run, s.nrun, &run_paths, &nrun_paths);
	if (!status)
		status = gp_cli_traces(base, s.nbase, &base_paths, &nbase_paths);
	if (status)
		goto cleanup;
	s.run = (const char *const *)run_paths;
	s.nrun = nrun_paths;
	s.base = (const char *const *)base_paths;
	s.nbase = nbase_paths;
	s.top = (int)top;
	s.progress = isatty(STDERR_FILENO);
	switch (gp_report_write(&s, err, sizeof(err))) {
	case GP_AN_OK:
		gp_msg("report written to %s", gp_term_str(s.out));
		status = GP_EXIT_OK;
		break;
	case GP_AN_BAD_INPUT:
		gp_msg("%s", gp_term_str(err)); /* it may quote the trace */
		status = GP_EXIT_USAGE;
		break;
	default:
		gp_msg("%s", gp_term_str(err));
		status = GP_EXIT_FAIL;
		break;
	}
cleanup:
	gp_run_paths_free(run_paths, nrun_paths);
	gp_run_paths_free(base_paths, nbase_paths);
	free(run);
	free(base);
	return status;
}

const struct gp_command gp_cmd_report = {
	.name = "report",
	.summary = "one offline HTML page: memory over time, the peak by layer, leaks, failures",
	.usage = "  gpuprof report TRACE|RUN... [-o report.html] [--force] [--base BASE...]\n"
		 "                 [--top N]\n"
		 "  gpuprof report SUMMARY.json [-o report.html] [--force]\n",
	.options =
		"  -o, --output FILE      the page (default report.html); written whole or not\n"
		"                         at all; never one of the inputs\n"
		"  -f, --force            replace FILE if it exists\n"
		"  --base FILE            an earlier run (its traces, repeated, or its summary):\n"
		"                         both runs over steps, and what grew, as gpuprof\n"
		"                         compare decides it\n"
		"  --top N                allocations and rows kept per table (default 20)\n"
		"  -h, --help             this help\n",
	.examples =
		"  gpuprof report run.json.gz -o run.html\n"
		"      memory over time, the peak by layer and category, the largest\n"
		"      allocations, leaks and out-of-memory failures, in one page that\n"
		"      opens from disk and fetches nothing\n"
		"  gpuprof report --base main.json.gz branch.json.gz -o diff.html\n"
		"      two runs side by side, and what grew by layer and category\n"
		"  gpuprof analyze --json run.json.gz > run.json; gpuprof report run.json\n"
		"      from a summary: everything but memory over time, which needs the trace\n",
	.exit_status =
		"  0 the page was written, 1 an I/O or system failure, 2 bad usage, bad\n"
		"  input, or an output that exists without --force or is an input (nothing\n"
		"  is written then)\n",
	.run = report_main,
};
