/* What the command lines of compare and check share: the options both
 * take, and how their errors are said ("gpuprof compare: ...", exit 2). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "exporters/parse_number.h"

int gp_cmp_usage(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return GP_CMP_BAD;
}

int gp_cmp_option_error(const char *prog, int c, const char *word)
{
	int is_long = strncmp(word, "--", 2) == 0;
	const char *eq = strchr(word, '=');

	if (c == ':')
		return is_long ? gp_cmp_usage(prog, "option '%s' needs an argument", word)
			       : gp_cmp_usage(prog, "option '-%c' needs an argument", optopt);
	if (!is_long)
		return gp_cmp_usage(prog, "unknown option '-%c'", optopt);
	/* getopt sets optopt only for a known long option, here given "=VALUE" */
	if (optopt && eq)
		return gp_cmp_usage(prog, "option '%.*s' takes no argument", (int)(eq - word), word);
	return gp_cmp_usage(prog, "unknown option '%s'", word);
}

int gp_cmp_common_option(const char *prog, struct gp_cmp_settings *s, int c, const char *arg)
{
	long v;

	switch (c) {
	case GP_CMP_OPT_METRIC:
		if (strcmp(arg, "peak") == 0)
			s->metric = GP_CMP_PEAK;
		else if (strcmp(arg, "peak-allocated") == 0)
			s->metric = GP_CMP_PEAK_ALLOCATED;
		else if (strcmp(arg, "peak-reserved") == 0)
			s->metric = GP_CMP_PEAK_RESERVED;
		else
			return gp_cmp_usage(
				prog, "--metric takes peak, peak-allocated or peak-reserved, not '%s'", arg);
		return 0;
	case GP_CMP_OPT_FORMAT:
		if (strcmp(arg, "text") == 0)
			s->format = GP_CMP_TEXT;
		else if (strcmp(arg, "json") == 0)
			s->format = GP_CMP_JSON;
		else if (strcmp(arg, "markdown") == 0)
			s->format = GP_CMP_MARKDOWN;
		else
			return gp_cmp_usage(prog, "--format takes text, json or markdown, not '%s'", arg);
		return 0;
	case GP_CMP_OPT_DEVICE:
		if (gp_parse_number(arg, 0, 63, &v))
			return gp_cmp_usage(prog, "--device takes a device index from 0 to 63, not '%s'",
					    arg);
		s->device = (int)v;
		return 0;
	case GP_CMP_OPT_ALLOW_OOM:
		s->allow_oom = 1;
		return 0;
	case GP_CMP_OPT_TOP:
		if (gp_parse_number(arg, 1, 1000, &v))
			return gp_cmp_usage(prog, "--top takes a number from 1 to 1000, not '%s'", arg);
		s->top = (int)v;
		return 0;
	default:
		return -1;
	}
}

int gp_cmp_limit_option(const char *prog, const char *opt, const char *arg, struct gp_cmp_limit *l,
			int percent_ok)
{
	struct gp_amount a;
	int rc = gp_parse_amount(arg, &a);

	if (rc == -ERANGE)
		return gp_cmp_usage(prog, "%s '%s': too large (at most 1000%% or 8 PiB)", opt, arg);
	if (rc == -EDOM && percent_ok)
		return gp_cmp_usage(prog, "%s %s: say %s%%, %sGB or %sGiB (a bare number is ambiguous)",
				    opt, arg, arg, arg, arg);
	if (rc == -EDOM)
		return gp_cmp_usage(prog, "%s %s: say %sGB, %sGiB or %sB (a bare number is ambiguous)",
				    opt, arg, arg, arg, arg);
	if (rc || (a.is_percent && !percent_ok))
		return gp_cmp_usage(prog, "%s takes %sa size (80GB, 1.5GiB, 4096B, 0; decimal kB, MB, GB, "
				    "TB or K, M, G, T; binary KiB, MiB, GiB, TiB), not '%s'", opt,
				    percent_ok ? "a percentage (2%, 0.5%) or " : "", arg);
	if (a.is_percent) {
		if (l->has_percent)
			return gp_cmp_usage(prog, "%s: a percentage given twice", opt);
		l->has_percent = 1;
		l->percent = a.percent;
	} else {
		if (l->has_bytes)
			return gp_cmp_usage(prog, "%s: a size given twice", opt);
		l->has_bytes = 1;
		l->bytes = a.bytes;
		l->decimal = a.decimal;
	}
	return 0;
}
