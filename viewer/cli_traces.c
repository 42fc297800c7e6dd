/* What the commands that take TRACE|RUN... share: their inputs expanded,
 * and remarks about them said (cli.h). */
#include "cli.h"
#include "viewer/render/term.h"
#include "viewer/run/run.h"

void gp_cli_note(void *ctx, const char *line)
{
	(void)ctx;
	gp_msg("%s", gp_term_str(line)); /* may name what a trace named */
}

int gp_cli_traces(const char *const *args, size_t n, char ***paths, size_t *npaths)
{
	char err[1024];

	if (gp_run_expand(args, n, paths, npaths, gp_cli_note, NULL, err, sizeof(err)) == 0)
		return 0;
	gp_msg("%s", gp_term_str(err));
	return GP_EXIT_USAGE;
}
