/* gpuprof analyze: who holds the memory at the peak, what leaks, why it ran
 * out; the work is in viewer/analyze/ (analyze.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "cli.h"
#include "viewer/render/term.h"
#include "viewer/run/run.h"

struct analyze_settings {
	struct gp_an_input *traces;
	size_t n_traces;
	int json;
	long top;
	long device;
	long pid;
	int has_at;
	double at;
};

static const struct option long_options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "top", required_argument, NULL, 'n' },
	{ "device", required_argument, NULL, 'd' },
	{ "process", required_argument, NULL, 'p' },
	{ "at", required_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int analyze_main(int argc, char **argv)
{
	struct analyze_settings s = { .top = 10, .device = -1, .pid = -1 };
	struct gp_an_settings an = { 0 };
	const char **args = NULL;
	char **paths = NULL;
	size_t npaths = 0;
	char err[1024];
	int c, prev, status = GP_EXIT_USAGE;
	const char *no_color = getenv("NO_COLOR");

	args = calloc((size_t)argc, sizeof(*args));
	if (!args) {
		gp_msg("out of memory");
		return GP_EXIT_FAIL;
	}
	/* '-': TRACEs and options in any order, whatever POSIXLY_CORRECT says */
	while ((prev = optind, c = getopt_long(argc, argv, "-:jn:d:p:a:h", long_options, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!*optarg) {
				status = gp_usage_error("an empty TRACE name");
				goto cleanup;
			}
			args[s.n_traces++] = optarg;
			break;
		case 'j':
			s.json = 1;
			break;
		case 'n':
			if (gp_parse_number(optarg, 1, 100000, &s.top)) {
				status = gp_usage_error("--top takes a number from 1 to 100000, not '%s'",
							optarg);
				goto cleanup;
			}
			break;
		case 'd':
			if (gp_parse_number(optarg, 0, 63, &s.device)) {
				status = gp_usage_error("--device takes a device index from 0 to 63, "
							"not '%s'", optarg);
				goto cleanup;
			}
			break;
		case 'p':
			if (gp_parse_number(optarg, 1, INT_MAX, &s.pid)) {
				status = gp_usage_error("--process takes a process id, not '%s'", optarg);
				goto cleanup;
			}
			break;
		case 'a': {
			char *end;

			errno = 0;
			s.at = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(s.at >= 0 && s.at <= 1e7)) {
				status = gp_usage_error("--at takes seconds from the report's time origin "
							"(as its times say them, 0 to 1e7), not '%s'", optarg);
				goto cleanup;
			}
			s.has_at = 1;
			break;
		}
		case 'h':
			gp_print_command_help(&gp_cmd_analyze);
			status = GP_EXIT_OK;
			goto cleanup;
		default:
			status = gp_option_error(c, argv[prev]);
			goto cleanup;
		}
	}
	if (!s.n_traces) {
		status = gp_usage_error("missing TRACE to analyze");
		goto cleanup;
	}
	/* a run directory stands for its traces */
	status = gp_cli_traces(args, s.n_traces, &paths, &npaths);
	if (status)
		goto cleanup;
	s.traces = calloc(npaths, sizeof(*s.traces));
	if (!s.traces) {
		gp_msg("out of memory");
		status = GP_EXIT_FAIL;
		goto cleanup;
	}
	for (size_t i = 0; i < npaths; i++)
		s.traces[i].path = paths[i];
	s.n_traces = npaths;
	an.inputs = s.traces;
	an.n_inputs = s.n_traces;
	an.top = (int)s.top;
	an.device = (int)s.device;
	an.pid = s.pid;
	an.has_at = s.has_at;
	an.at_s = s.at;
	an.json = s.json;
	an.color = !s.json && isatty(STDOUT_FILENO) && !(no_color && *no_color);
	an.progress = isatty(STDERR_FILENO);
	an.out = stdout;
	switch (gp_an_run(&an, err, sizeof(err), gp_cli_note, NULL)) {
	case GP_AN_OK:
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
	free(s.traces);
	gp_run_paths_free(paths, npaths);
	free(args);
	return status;
}

const struct gp_command gp_cmd_analyze = {
	.name = "analyze",
	.summary = "who holds the memory at the peak, what leaks, why it ran out",
	.usage = "  gpuprof analyze TRACE|RUN... [--json] [--top N] [--device N] [--process PID]\n"
		 "                  [--at SECONDS]\n",
	.options =
		"  --json                 the report as JSON (schema gpuprof.analyze/1,\n"
		"                         viewer/analyze/SCHEMA.md) instead of text\n"
		"  --top N                the N largest allocations and rows per table\n"
		"                         (default 10)\n"
		"  --device N             report GPU N of each process only\n"
		"  --process PID          analyze the trace of process PID only\n"
		"  --at SECONDS           also what was live then, after every event up to\n"
		"                         it (seconds as the report's times, to the\n"
		"                         nanosecond): by category, layer and source line,\n"
		"                         and the largest allocations\n"
		"  -h, --help             this help\n",
	.examples =
		"  gpuprof analyze run.json.gz\n"
		"      the peak (who made what was alive, by layer and category), leaks\n"
		"      step after step, and why an allocation failed, with advice\n"
		"  gpuprof analyze run/\n"
		"      a run directory (gpuprof --trace -o run/ -- torchrun ...): every\n"
		"      rank's peaks side by side, the rank that runs out first and why\n"
		"  gpuprof analyze run.json.gz run.*.json.gz --json > report.json\n"
		"      every process of a run (one trace each), as JSON\n"
		"  gpuprof analyze --top 30 --device 1 run.json.gz\n"
		"      more rows, GPU 1 only\n"
		"  gpuprof analyze --at 12.5 run.json.gz\n"
		"      what was live 12.5 s in, as the report's breakdown at that moment\n",
	.environment =
		"  NO_COLOR               set and not empty: no colors in the report (there\n"
		"                         are none anyway when stdout is no terminal)\n",
	.exit_status =
		"  0 the report was written, 1 an I/O or system failure, 2 bad usage or bad\n"
		"  input (a TRACE that is no gpuprof trace, or is damaged: gpuprof recover)\n",
	.run = analyze_main,
};
