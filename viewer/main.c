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
	"  0 success, 1 failure, 2 bad usage or bad input. gpuprof --trace exits with\n"
	"  PROGRAM's status instead; each command's help says what its status means.\n";

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
	if (!cmd)
		return gp_usage_error("no help for '%s': not a command", argv[1]);
	gp_print_command_help(cmd);
	return GP_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct gp_command *cmd;
	const char *word;

	if (argc < 2)
		return gp_usage_error("missing command");
	word = argv[1];
	if (is_help(word))
		return help_main(argc - 1, argv + 1);
	if (strcmp(word, "--version") == 0 || strcmp(word, "-V") == 0) {
		printf("gpuprof %s\n", GPUPROF_VERSION);
		return GP_EXIT_OK;
	}
	cmd = find_command(word);
	if (!cmd) {
		if (word[0] == '-')
			return gp_usage_error("unknown option '%s'", word);
		return gp_usage_error("unknown command '%s'", word);
	}
	running = cmd;
	return cmd->run(argc - 1, argv + 1);
}
