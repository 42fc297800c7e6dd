/* gpuprof: the command-line front end.
 *
 * This file only picks the command and hands it the rest of the arguments;
 * every command is one cmd_*.c file. To add one: write cmd_NAME.c defining a
 * struct gp_command, declare it in cli.h, list it in commands[] below and in
 * CMakeLists.txt. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Order is the order of --help. */
static const struct gp_command *const commands[] = {
	&gp_cmd_trace,
	&gp_cmd_recover,
	&gp_cmd_analyze,
	&gp_cmd_report,
	&gp_cmd_compare, &gp_cmd_check,
	&gp_cmd_merge,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The overview's exit status; each command's help says its own. */
static const char help_exit_status[] =
	"  0 success, 1 failure, 2 bad usage or bad input (gpuprof with no command\n"
	"  prints this overview and exits 2). gpuprof --trace exits with PROGRAM's\n"
	"  status instead; each command's help says what its status means.\n";

void gp_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gpuprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The command being run, for the hint after a usage error: that command's
 * own help says more than the overview. NULL before a command is found. */
static const struct gp_command *running;

int gp_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gpuprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (running)
		fprintf(stderr, "Try 'gpuprof %s --help'.\n", running->name);
	else
		fputs("Try 'gpuprof --help'.\n", stderr);
	return GP_EXIT_USAGE;
}

int gp_option_error(int c, const char *word)
{
	int is_long = strncmp(word, "--", 2) == 0;
	const char *eq = strchr(word, '=');

	if (c == ':')
		return is_long ? gp_usage_error("option '%s' needs an argument", word)
			       : gp_usage_error("option '-%c' needs an argument", optopt);
	if (!is_long)
		return gp_usage_error("unknown option '-%c'", optopt);
	/* getopt sets optopt only for a known long option, here given "=VALUE" */
	if (optopt && eq)
		return gp_usage_error("option '%.*s' takes no argument",
				      (int)(eq - word), word);
	return gp_usage_error("unknown option '%s'", word);
}

/* `gpuprof --help`: what each command is for and where its help is. */
static void print_overview(void)
{
	size_t i;

	printf("gpuprof %s: records the GPU memory activity of CUDA programs\n\n",
	       GPUPROF_VERSION);
	fputs("USAGE\n", stdout);
	for (i = 0; i < N_COMMANDS; i++)
		fputs(commands[i]->usage, stdout);
	fputs("  gpuprof help [COMMAND] | --help | --version\n\nCOMMANDS\n", stdout);
	for (i = 0; i < N_COMMANDS; i++)
		printf("  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("  Each command can also be given as an option: gpuprof --trace ...\n"
	      "  gpuprof COMMAND --help, or gpuprof help COMMAND: that command's usage,\n"
	      "  options, environment, exit status and examples.\n", stdout);
	printf("\nEXIT STATUS\n%s", help_exit_status);
}

void gp_print_command_help(const struct gp_command *cmd)
{
	printf("gpuprof %s: %s\n\nUSAGE\n%s", cmd->name, cmd->summary, cmd->usage);
	if (cmd->options)
		printf("\nOPTIONS\n%s", cmd->options);
	if (cmd->modes_title)
		printf("\n%s\n%s", cmd->modes_title, cmd->modes);
	if (cmd->environment)
		printf("\nENVIRONMENT\n%s", cmd->environment);
	printf("\nEXIT STATUS\n%s", cmd->exit_status);
	if (cmd->examples)
		printf("\nEXAMPLES\n%s", cmd->examples);
}

static const struct gp_command *find_command(const char *word)
{
	size_t i;

	/* `gpuprof --trace` is the documented spelling, so any "--NAME" works. */
	if (word[0] == '-' && word[1] == '-')
		word += 2;
	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(word, commands[i]->name) == 0)
			return commands[i];
	return NULL;
}

/* Edits (insert, delete, replace, swap two neighbours) from a to b: how far
 * a mistyped word is from a command. Only short words are compared. */
static size_t edit_distance(const char *a, const char *b)
{
	enum { MAX = 32 };
	size_t la = strlen(a), lb = strlen(b), d[MAX + 1][MAX + 1];

	if (la > MAX || lb > MAX)
		return (size_t)-1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* The command (or "help", "version") that word most likely meant: one or
 * two edits away, no more than a third of the name, or the start of exactly
 * one name; NULL when none is, or when two are equally near. */
static const char *nearest_command(const char *word)
{
	const char *names[N_COMMANDS + 2], *best = NULL, *prefixed = NULL;
	size_t n = 0, best_d = (size_t)-1, len = strlen(word), nprefixed = 0;
	int tie = 0;

	for (size_t i = 0; i < N_COMMANDS; i++)
		names[n++] = commands[i]->name;
	names[n++] = "help";
	names[n++] = "version";
	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, names[i]);

		if (len >= 3 && strncmp(word, names[i], len) == 0) {
			prefixed = names[i];
			nprefixed++;
		}
		if (d > 2 || 3 * d > strlen(names[i]))
			continue;
		if (d < best_d) {
			best = names[i];
			best_d = d;
			tie = 0;
		} else if (d == best_d) {
			tie = 1;
		}
	}
	if (best && !tie)
		return best;
	return nprefixed == 1 ? prefixed : NULL;
}

/* An unknown first word: a command or a global option, with the nearest
 * one where a typo is likely. */
static int unknown_command(const char *word)
{
	int dashes = word[0] == '-' && word[1] == '-';
	const char *near = dashes ? nearest_command(word + 2) : nearest_command(word);

	if (word[0] == '-' && !dashes)
		return gp_usage_error("unknown option '%s'", word);
	if (dashes && near)
		return gp_usage_error("unknown option '%s'; did you mean '--%s'?", word, near);
	if (dashes)
		return gp_usage_error("unknown option '%s'", word);
	/* "version" is only ever an option */
	if (near && strcmp(near, "version") == 0)
		return gp_usage_error("unknown command '%s'; did you mean '--version'?", word);
	if (near)
		return gp_usage_error("unknown command '%s'; did you mean '%s'?", word, near);
	return gp_usage_error("unknown command '%s'", word);
}

static int is_help(const char *word)
{
	return strcmp(word, "help") == 0 || strcmp(word, "--help") == 0 ||
	       strcmp(word, "-h") == 0;
}

/* `gpuprof help [COMMAND]`, `gpuprof --help [COMMAND]`: argv[0] is the word
 * that asked for help. Each command answers its own --help as well. */
static int help_main(int argc, char **argv)
{
	const struct gp_command *cmd;

	if (argc < 2 || is_help(argv[1])) {
		if (argc > 2)
			return gp_usage_error("unexpected argument '%s' after %s %s", argv[2],
					      argv[0], argv[1]);
		print_overview();
		return GP_EXIT_OK;
	}
	if (argc > 2)
		return gp_usage_error("unexpected argument '%s' (help for one COMMAND at a time)",
				      argv[2]);
	cmd = find_command(argv[1]);
	if (!cmd) {
		const char *near = nearest_command(argv[1]);

		if (near && find_command(near))
			return gp_usage_error("no help for '%s': not a command; did you mean '%s'?",
					      argv[1], near);
		return gp_usage_error("no help for '%s': not a command", argv[1]);
	}
	gp_print_command_help(cmd);
	return GP_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct gp_command *cmd;
	const char *word;

	/* Nothing asked: the overview, as --help prints it, but a failure,
	 * so that a script whose command word came out empty stops. */
	if (argc < 2) {
		print_overview();
		return GP_EXIT_USAGE;
	}
	word = argv[1];
	if (is_help(word))
		return help_main(argc - 1, argv + 1);
	if (strcmp(word, "--version") == 0 || strcmp(word, "-V") == 0) {
#ifdef GPUPROF_WITHOUT_RECORDER
		printf("gpuprof %s (without the recorder: --trace cannot record)\n", GPUPROF_VERSION);
#else
		printf("gpuprof %s\n", GPUPROF_VERSION);
#endif
		return GP_EXIT_OK;
	}
	cmd = find_command(word);
	if (!cmd)
		return unknown_command(word);
	running = cmd;
	return cmd->run(argc - 1, argv + 1);
}
