/* Declarations shared by the gpuprof command-line front end.
 *
 * main.c only parses the first argument and dispatches to one command; each
 * command lives in its own cmd_*.c file and describes itself (usage lines,
 * options, examples, exit status) in a struct gp_command, which its own help
 * (`gpuprof COMMAND --help`, `gpuprof help COMMAND`) prints, and whose name
 * and summary the overview (`gpuprof --help`) lists. */
#ifndef GPUPROF_CLI_H
#define GPUPROF_CLI_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* gp_parse_number(), for the commands' numeric options */
#include "exporters/parse_number.h"

/* Exit status of gpuprof's own outcomes. `gpuprof --trace` otherwise exits with
 * the status of the program it ran, so 2 is shared with programs that use it;
 * a "gpuprof: " line on stderr tells them apart. */
enum {
	GP_EXIT_OK = 0,
	GP_EXIT_FAIL = 1,  /* I/O or system failure */
	GP_EXIT_USAGE = 2, /* bad usage, bad input, or PROGRAM could not be started */
};

struct gp_command {
	const char *name;     /* "trace" runs as `gpuprof trace` and `gpuprof --trace` */
	const char *summary;  /* one line for the COMMANDS section */
	const char *usage;    /* USAGE lines, each "  gpuprof ...\n" */
	const char *options;  /* OPTIONS lines, or NULL */
	const char *modes_title; /* a section after OPTIONS: its title, or NULL */
	const char *modes;       /* its lines */
	const char *examples; /* EXAMPLES lines, or NULL */
	const char *environment; /* ENVIRONMENT lines, or NULL */
	const char *exit_status; /* EXIT STATUS lines */
	/* argv[0] is the command name as typed; returns the exit status. */
	int (*run)(int argc, char **argv);
};

extern const struct gp_command gp_cmd_trace;
extern const struct gp_command gp_cmd_recover;
extern const struct gp_command gp_cmd_analyze;
extern const struct gp_command gp_cmd_compare, gp_cmd_check;
extern const struct gp_command gp_cmd_report;
extern const struct gp_command gp_cmd_merge;

/* "gpuprof: " + message + newline, on stderr. */
void gp_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, followed by the --help hint; returns GP_EXIT_USAGE. */
int gp_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports what getopt_long() rejected: c is its '?' or ':' result (the
 * optstring must start with ':' after any '+'/'-'), word is argv[optind] as it
 * was before that call: the word holding the bad option, even inside a cluster
 * like "-fz". Returns GP_EXIT_USAGE. */
int gp_option_error(int c, const char *word);
/* A command's own help, on stdout: the only thing besides the overview and
 * --version that gpuprof itself writes there, so a program's stdout passes
 * through untouched. */
void gp_print_command_help(const struct gp_command *cmd);

/* cli_traces.c: the commands that take TRACE|RUN... (analyze, report,
 * merge). A remark about the input, as a "gpuprof: " line (escaped: it may
 * quote what a trace named); ctx unused. */
void gp_cli_note(void *ctx, const char *line);
/* The traces that args name, a run directory standing for its traces
 * (viewer/run/run.h, gp_run_expand), its notes said: 0, and *paths
 * (gp_run_paths_free); else the error said and GP_EXIT_USAGE. */
int gp_cli_traces(const char *const *args, size_t n, char ***paths, size_t *npaths);

#endif
