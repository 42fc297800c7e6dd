/* gpuprof recover: turns a trace cut short (the recorded process was killed,
 * the machine went down) into a valid one; see exporters/trace_recover.h. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "exporters/out_file.h"
#include "exporters/trace_recover.h"

struct recover_settings {
	const char *trace;
	const char *output; /* NULL: repair in place */
	int force;          /* output may be replaced */
};

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* real: the trace's real path, where it was repaired in place (NULL: -o) */
static void report(const struct recover_settings *s, const struct gp_recover_result *res,
		   const char *real)
{
	const char *where = s->output ? s->output : s->trace;
	size_t rn = real ? strlen(real) : 0;
	struct stat st;

	if (res->already_complete) {
		if (s->output)
			gp_msg("%s is already complete; copied it to %s", s->trace, s->output);
		else
			gp_msg("%s is already complete; nothing to do", s->trace);
		return;
	}
	gp_msg("recovered %" PRIu64 " events from %s", res->events_kept, s->trace);
	if (res->bytes_dropped)
		gp_msg("  left out: an incomplete last line (%" PRIu64 " bytes)", res->bytes_dropped);
	if (res->lines_skipped)
		gp_msg("  passed over: %" PRIu64 " damaged line%s (%" PRIu64 " bytes), the first after "
		       "event %" PRIu64 "; the events after %s kept",
		       res->lines_skipped, res->lines_skipped == 1 ? "" : "s", res->bytes_skipped,
		       res->damage_after, res->lines_skipped == 1 ? "it" : "them");
	if (res->chunks_dropped)
		gp_msg("  passed over: %" PRIu64 " flush chunk%s whose data was damaged (%" PRIu64
		       " bytes decoded from %s, none kept: damage alters what still decodes)",
		       res->chunks_dropped, res->chunks_dropped == 1 ? "" : "s",
		       res->chunk_bytes_dropped, res->chunks_dropped == 1 ? "it" : "them");
	if (res->gzip_gaps)
		gp_msg("  passed over: %" PRIu64 " stretch%s of compressed data that did not decode "
		       "(%" PRIu64 " bytes), up to the next flush",
		       res->gzip_gaps, res->gzip_gaps == 1 ? "" : "es", res->gzip_bytes_skipped);
	if (res->gzip_lost_tail)
		gp_msg("  lost: everything after compressed data that did not decode (this trace's "
		       "flushes do not let recover go on past it)");
	else if (res->gzip_truncated && !gp_recover_damaged(res))
		gp_msg("  the gzip stream was cut short");
	/* named as TRACE was, unless that is a link to it */
	if (res->original[0] && rn && strncmp(res->original, real, rn) == 0 &&
	    lstat(s->trace, &st) == 0 && S_ISREG(st.st_mode))
		gp_msg("the damaged original is kept as %s%s", s->trace, res->original + rn);
	else if (res->original[0])
		gp_msg("the damaged original is kept as %s", res->original);
	if (s->output)
		gp_msg("repaired trace written to %s", where);
	else
		gp_msg("%s repaired in place", where);
}

static int recover_main(int argc, char **argv)
{
	struct recover_settings s = { 0 };
	struct gp_recover_result res = { 0 };
	char *real = NULL;
	struct stat st;
	int c, prev, err, status = GP_EXIT_USAGE;

	/* '-': TRACE may come before or after -o, whatever POSIXLY_CORRECT says */
	while ((prev = optind, c = getopt_long(argc, argv, "-:o:fh", long_options, NULL)) != -1) {
		switch (c) {
		case 1:
			if (s.trace)
				return gp_usage_error("unexpected argument '%s' (one TRACE at a time)",
						      optarg);
			s.trace = optarg;
			break;
		case 'o':
			s.output = optarg;
			break;
		case 'f':
			s.force = 1;
			break;
		case 'h':
			gp_print_command_help(&gp_cmd_recover);
			return GP_EXIT_OK;
		default:
			return gp_option_error(c, argv[prev]);
		}
	}
	if (!s.trace)
		return gp_usage_error("missing TRACE to recover");
	if (s.output && !*s.output)
		return gp_usage_error("option '-o' needs a file name");

	if (stat(s.trace, &st) != 0) {
		gp_msg("%s: %s", s.trace, strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		gp_msg("%s: not a gpuprof trace (not a regular file)", s.trace);
		goto cleanup;
	}
	if (s.output) {
		char why[1024];

		if (gp_out_is_input(s.output, &s.trace, 1, why, sizeof(why))) {
			gp_msg("%s (without -o, TRACE is repaired in place)", why);
			goto cleanup;
		}
		err = gp_trace_recover(s.trace, s.output, s.force, &res);
	} else {
		/* The repair is renamed over the path: through a symbolic link
		 * that would replace the link, not the trace it names. */
		real = realpath(s.trace, NULL);
		err = real ? gp_trace_recover_in_place(real, &res) : -errno;
	}
	if (err == 0) {
		report(&s, &res, real);
		status = GP_EXIT_OK;
	} else if (err == -EINVAL) {
		gp_msg("%s: not a gpuprof trace", s.trace);
	} else if (err == -EBADMSG) {
		gp_msg("%s: its data fails the gzip check and no damaged part could be found: any "
		       "event may be altered, none is kept (nothing written)", s.trace);
	} else if (err == -EEXIST && s.output && res.output_failed) {
		gp_msg("%s already exists (--force replaces it)", s.output);
	} else if (res.output_failed) {
		gp_msg("cannot write %s: %s", s.output ? s.output : "the repaired trace beside it",
		       strerror(-err));
		status = GP_EXIT_FAIL;
	} else {
		gp_msg("cannot recover %s: %s", s.trace, strerror(-err));
		status = GP_EXIT_FAIL;
	}
cleanup:
	free(real);
	return status;
}

const struct gp_command gp_cmd_recover = {
	.name = "recover",
	.summary = "repair a trace cut short (killed process, crashed machine)",
	.usage = "  gpuprof recover TRACE [-o OUT] [--force]\n",
	.options =
		"  -o, --output OUT       write the repaired trace to OUT (default: repair\n"
		"                         TRACE in place)\n"
		"  -f, --force            replace OUT if it exists\n"
		"  -h, --help             this help\n",
	.examples =
		"  gpuprof recover run.json.gz\n"
		"      repair run.json.gz after a crash, keeping every event up to the\n"
		"      last flush (the recorder flushes at least once a second); damaged\n"
		"      lines in the middle are passed over, the events after them kept,\n"
		"      and the damaged original kept as run.json.gz.orig\n",
	.exit_status =
		"  0 repaired (or already complete), 1 an I/O or system failure, 2 bad usage,\n"
		"  a trace whose data fails its check where no damage can be found,\n"
		"  a TRACE that is missing or no gpuprof trace, an OUT that exists without\n"
		"  --force, or an OUT that is TRACE\n",
	.run = recover_main,
};
