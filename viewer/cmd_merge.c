/* gpuprof merge: one Perfetto trace from the traces of a multi-process,
 * multi-rank run; the work is in viewer/merge/ (merge.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "viewer/analyze/result/units.h"
#include "viewer/merge/merge.h"
#include "viewer/render/term.h"
#include "viewer/run/run.h"

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "align", required_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && strcmp(s + n - t, tail) == 0;
}

/* "ranks 0-7", "rank 3", "ranks 0-3, 2 without a rank", "no ranks" */
static void ranks_text(char *buf, size_t cap, const struct gp_merge_result *res)
{
	int n = 0;

	if (res->rank_min < 0)
		n = snprintf(buf, cap, "no ranks");
	else if (res->rank_min == res->rank_max)
		n = snprintf(buf, cap, "rank %" PRId64, res->rank_min);
	else
		n = snprintf(buf, cap, "ranks %" PRId64 "-%" PRId64, res->rank_min, res->rank_max);
	if (res->unranked && res->rank_min >= 0 && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, ", %zu without a rank", res->unranked);
}

static int merge_main(int argc, char **argv)
{
	struct gp_merge_settings s = { .align = GP_MERGE_ALIGN_WALL, .note = gp_cli_note };
	struct gp_merge_result res;
	const char **args = NULL;
	char **paths = NULL;
	size_t nargs = 0, npaths = 0;
	char err[1024], size[32], ranks[96];
	int c, prev, rc, status = GP_EXIT_USAGE;

	args = calloc((size_t)argc, sizeof(*args));
	if (!args) {
		gp_msg("out of memory");
		return GP_EXIT_FAIL;
	}
	/* '-': TRACEs and options in any order, whatever POSIXLY_CORRECT says */
	while ((prev = optind, c = getopt_long(argc, argv, "-:o:fh", long_options, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!*optarg) {
				status = gp_usage_error("an empty TRACE name");
				goto cleanup;
			}
			args[nargs++] = optarg;
			break;
		case 'o':
			s.output = optarg;
			break;
		case 'f':
			s.force = 1;
			break;
		case 'a':
			if (strcmp(optarg, "wall") == 0) {
				s.align = GP_MERGE_ALIGN_WALL;
			} else if (strcmp(optarg, "collectives") == 0) {
				s.align = GP_MERGE_ALIGN_COLLECTIVES;
			} else {
				status = gp_usage_error("--align takes wall or collectives, not '%s'",
							optarg);
				goto cleanup;
			}
			break;
		case 'h':
			gp_print_command_help(&gp_cmd_merge);
			status = GP_EXIT_OK;
			goto cleanup;
		default:
			status = gp_option_error(c, argv[prev]);
			goto cleanup;
		}
	}
	if (!nargs) {
		status = gp_usage_error("missing TRACE or RUN to merge");
		goto cleanup;
	}
	if (!s.output) {
		status = gp_usage_error("missing -o PATH (the merged trace)");
		goto cleanup;
	}
	if (!ends_with(s.output, ".json.gz") && !ends_with(s.output, ".json")) {
		status = gp_usage_error("-o takes a name ending .json.gz (or .json), not '%s'",
					s.output);
		goto cleanup;
	}
	/* a run directory stands for its traces */
	status = gp_cli_traces(args, nargs, &paths, &npaths);
	if (status)
		goto cleanup;
	s.traces = (const char *const *)paths;
	s.ntraces = npaths;
	rc = gp_merge_run(&s, &res, err, sizeof(err));
	if (rc) {
		gp_msg("%s", gp_term_str(err)); /* it may quote a trace */
		status = rc == -EINVAL || rc == -EEXIST || rc == -ENOENT ? GP_EXIT_USAGE
									  : GP_EXIT_FAIL;
		goto cleanup;
	}
	an_fmt_bytes(size, sizeof(size), res.bytes);
	ranks_text(ranks, sizeof(ranks), &res);
	gp_msg("merged %zu trace%s (%s) into %s (%s); open it in https://ui.perfetto.dev",
	       res.traces, res.traces == 1 ? "" : "s", ranks, gp_term_str(s.output), size);
	status = GP_EXIT_OK;
cleanup:
	gp_run_paths_free(paths, npaths);
	free(args);
	return status;
}

const struct gp_command gp_cmd_merge = {
	.name = "merge",
	.summary = "one Perfetto trace of a run's ranks, a process group each",
	.usage = "  gpuprof merge TRACE|RUN... -o MERGED.json.gz [--align wall|collectives]\n"
		 "                [--force]\n",
	.options =
		"  -o, --output PATH      the merged trace (required): PATH ending .json.gz\n"
		"                         (gzip) or .json\n"
		"  -f, --force            replace PATH if it exists\n"
		"  --align wall|collectives\n"
		"                         how the clocks of several hosts are aligned: by\n"
		"                         their wall clocks (default; as close as NTP/PTP\n"
		"                         keeps them, typically within a millisecond), or on\n"
		"                         the NCCL kernels that end together on every rank.\n"
		"                         Traces of one host share its clock either way\n"
		"  -h, --help             this help\n",
	.examples =
		"  gpuprof merge run/ -o merged.json.gz\n"
		"      every rank of a run directory in one trace: rank 0's CPU and GPU\n"
		"      tracks together, then rank 1's...; open it in https://ui.perfetto.dev\n"
		"  gpuprof merge run/ --align collectives -o merged.json.gz\n"
		"      ranks on several hosts, their clocks aligned on NCCL collectives\n"
		"  gpuprof merge run.json.gz run.*.json.gz -o merged.json.gz\n"
		"      a program and its child processes\n",
	.exit_status =
		"  0 merged, 1 an I/O or system failure, 2 bad usage or bad input (a TRACE\n"
		"  that is missing, no gpuprof trace, damaged or cut short: gpuprof recover),\n"
		"  or an output that exists without --force\n",
	.run = merge_main,
};
