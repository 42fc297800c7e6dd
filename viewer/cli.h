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

/* An option's number: decimal, no sign, no blanks, no trailing text, within
 * [min, max]. 0, or -EINVAL (*out untouched). */
static inline int gp_parse_number(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Where the recorder in a process other than the root one writes its trace:
 * <stem>.<pid>.json.gz for an output <stem>.json.gz, else <output>.<pid>.
 * Each process that uses CUDA gets its own file because the recorders of
 * several processes cannot share one gzip stream.
 * The recorder (profiler/) keeps its own copy of this rule, since the injected
 * library does not link with the front end: change both together.
 * Returns 0, or -ENAMETOOLONG when buf is too small. */
#define GP_TRACE_SUFFIX ".json.gz"
static inline int gp_child_trace_path(char *buf, size_t size, const char *output,
				      pid_t pid)
{
	size_t len = strlen(output), sfx = strlen(GP_TRACE_SUFFIX);
	int n;

	if (len > sfx && strcmp(output + len - sfx, GP_TRACE_SUFFIX) == 0)
		n = snprintf(buf, size, "%.*s.%ld%s", (int)(len - sfx), output,
			     (long)pid, GP_TRACE_SUFFIX);
	else
		n = snprintf(buf, size, "%s.%ld", output, (long)pid);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The inverse, for finding the children's traces after a run: the pid when
 * name (a file name, no directory) is what gp_child_trace_path() makes of the
 * output file name out_name, else -1. */
static inline pid_t gp_child_trace_pid(const char *out_name, const char *name)
{
	size_t len = strlen(out_name), sfx = strlen(GP_TRACE_SUFFIX);
	const char *tail = "", *p;
	long pid = 0;

	if (len > sfx && strcmp(out_name + len - sfx, GP_TRACE_SUFFIX) == 0) {
		len -= sfx;
		tail = GP_TRACE_SUFFIX;
	}
	/* No leading zero: the recorder writes the pid with %ld. */
	if (strncmp(name, out_name, len) != 0 || name[len] != '.' ||
	    name[len + 1] == '0')
		return -1;
	for (p = name + len + 1; *p >= '0' && *p <= '9'; p++) {
		pid = pid * 10 + (*p - '0');
		if (pid > 0x7fffffffL)
			return -1;
	}
	if (p == name + len + 1 || pid == 0 || strcmp(p, tail) != 0)
		return -1;
	return (pid_t)pid;
}

#endif
