/* `gpuprof --trace`'s command line: gpuprof's options, then PROGRAM and its
 * arguments, untouched. */
#include <getopt.h>
#include <stdbool.h>

#include "dump_when.h"
#include "env_vars.h"
#include "launch.h"
#include "parse_number.h"
#include "viewer/cli.h"

enum { OPT_PYTHON = 0x100, OPT_MODE, OPT_OPS, OPT_HISTORY, OPT_STACKS, OPT_WINDOW, OPT_DUMP_AT, OPT_DUMP_STEPS,
       OPT_TRACE_CAP };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "ops", no_argument, NULL, OPT_OPS },
	{ "torch-history", no_argument, NULL, OPT_HISTORY },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "dump-at", required_argument, NULL, OPT_DUMP_AT },
	{ "dump-steps", required_argument, NULL, OPT_DUMP_STEPS },
	{ "trace-cap", required_argument, NULL, OPT_TRACE_CAP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int gp_trace_options(int argc, char **argv, struct gp_trace_settings *s)
{
	int c, prev;

	/* '+': options end at PROGRAM; what follows it is PROGRAM's, so
	 * `gpuprof --trace ./app -o x` passes -o x to app. */
	while ((prev = optind, c = getopt_long(argc, argv, "+:o:fh", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			s->output = optarg;
			break;
		case 'f':
			s->force = true;
			break;
		case OPT_PYTHON:
			s->python = optarg;
			break;
		case OPT_MODE:
			if (gp_mode_parse(optarg, &s->mode) != 0)
				return gp_usage_error("--mode must be tensor, native or cuda, not '%s'",
						      optarg);
			break;
		case OPT_OPS:
			s->ops = true;
			break;
		case OPT_HISTORY:
			s->history = true;
			break;
		case OPT_STACKS:
			s->stacks = true;
			break;
		case OPT_WINDOW:
			if (gp_parse_number(optarg, GP_ENV_WINDOW_S_MIN + 1, GP_ENV_WINDOW_S_MAX, &s->window_s) != 0)
				return gp_usage_error("--window must be a number of seconds, 1 to %ld, not '%s'",
						      (long)GP_ENV_WINDOW_S_MAX, optarg);
			break;
		case OPT_DUMP_AT: {
			uint64_t bytes;
			unsigned permille;

			if (gp_parse_dump_at(optarg, &bytes, &permille) != 0)
				return gp_usage_error("--dump-at must be bytes (60G, 512MiB) or a share of the "
						      "device (90%%, 87.5%%), not '%s'", optarg);
			s->dump_at = optarg;
			break;
		}
		case OPT_DUMP_STEPS: {
			uint64_t first, last;

			if (gp_parse_dump_steps(optarg, &first, &last) != 0)
				return gp_usage_error("--dump-steps must be steps A-B (1 <= A <= B) or one step "
						      "A, not '%s'", optarg);
			s->dump_steps = optarg;
			break;
		}
		case OPT_TRACE_CAP: {
			uint64_t bytes;

			if (gp_parse_trace_cap(optarg, &bytes) != 0)
				return gp_usage_error("--trace-cap must be a size of at least 64KiB (1GiB, 500MB) "
						      "or off, not '%s'", optarg);
			s->trace_cap = optarg;
			break;
		}
		case 'h':
			return GP_TRACE_HELP;
		default:
			return gp_option_error(c, argv[prev]);
		}
	}
	if (optind >= argc)
		return gp_usage_error("missing PROGRAM to run");
	if (s->output && !*s->output)
		return gp_usage_error("option '-o' needs a file name");
	if (s->python && !*s->python)
		return gp_usage_error("option '--python' needs a program");
	if ((s->dump_at || s->dump_steps) && !s->window_s)
		s->window_s = GP_FLIGHT_DEFAULT_WINDOW_S;
	s->program = argv + optind;
	return 0;
}
