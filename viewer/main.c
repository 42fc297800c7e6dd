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

/* Order is the order of --help. Later: compare, check, report. */
static const struct gp_command *const commands[] = {
	&gp_cmd_trace,
	&gp_cmd_recover,
	&gp_cmd_analyze,
	&gp_cmd_compare, &gp_cmd_check,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char help_environment[] =
	"  GPUPROF_INJECT_LIB     the recorder library to inject (default: the one\n"
	"                         installed with gpuprof, or built beside it)\n"
	"  GPUPROF_PYTHON         the interpreter for PROGRAM.py (default: python3)\n"
	"  GPUPROF_TORCH_HISTORY_ENTRIES\n"
	"                         --torch-history: the entries PyTorch's allocator keeps\n"
	"                         (default 1000000; the oldest go first)\n"
	"  NO_COLOR               set and not empty: no colors in analyze's report\n"
	"                         (there are none anyway when stdout is no terminal)\n";

static const char help_exit_status[] =
	"  gpuprof --trace exits with PROGRAM's status, or 128+N when PROGRAM was\n"
	"  killed by signal N. Otherwise: 0 success, 1 failure, 2 bad usage or bad\n"
	"  input, or PROGRAM could not be started.\n";

void gp_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gpuprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int gp_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gpuprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
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

void gp_print_help(void)
{
	size_t i;

	printf("gpuprof %s: records the GPU memory activity of CUDA programs\n\n",
	       GPUPROF_VERSION);
	fputs("USAGE\n", stdout);
	for (i = 0; i < N_COMMANDS; i++)
		fputs(commands[i]->usage, stdout);
	fputs("  gpuprof --help | --version\n\nCOMMANDS\n", stdout);
	for (i = 0; i < N_COMMANDS; i++)
		printf("  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("  Each command can also be given as an option: gpuprof --trace ...\n"
	      "\nOPTIONS\n", stdout);
	for (i = 0; i < N_COMMANDS; i++)
		if (commands[i]->options)
			printf("%s%s", i ? "\n" : "", commands[i]->options);
	printf("\nENVIRONMENT\n%s\nEXIT STATUS\n%s\nEXAMPLES\n", help_environment,
	       help_exit_status);
	for (i = 0; i < N_COMMANDS; i++)
		if (commands[i]->examples)
			fputs(commands[i]->examples, stdout);
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

int main(int argc, char **argv)
{
	const struct gp_command *cmd;
	const char *word;

	if (argc < 2)
		return gp_usage_error("missing command");
	word = argv[1];
	if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
		gp_print_help();
		return GP_EXIT_OK;
	}
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
	return cmd->run(argc - 1, argv + 1);
}
