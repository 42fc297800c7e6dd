/* The command-line pieces gpuprof compare and gpuprof check share
 * (options.c); the commands themselves are viewer/cmd_compare.c and
 * viewer/cmd_check.c. */
#ifndef GPUPROF_CMP_OPTIONS_H
#define GPUPROF_CMP_OPTIONS_H

#include "compare.h"

/* getopt codes of the shared options */
enum {
	GP_CMP_OPT_METRIC = 0x100,
	GP_CMP_OPT_FORMAT,
	GP_CMP_OPT_DEVICE,
	GP_CMP_OPT_TOP,
	GP_CMP_OPT_ALLOW_OOM,
};

#define GP_CMP_COMMON_LONG_OPTIONS                                            \
	{ "metric", required_argument, NULL, GP_CMP_OPT_METRIC },             \
	{ "format", required_argument, NULL, GP_CMP_OPT_FORMAT },             \
	{ "device", required_argument, NULL, GP_CMP_OPT_DEVICE },             \
	{ "top", required_argument, NULL, GP_CMP_OPT_TOP },                   \
	{ "allow-oom", no_argument, NULL, GP_CMP_OPT_ALLOW_OOM }

/* The help's definition of SIZE, for compare's and check's options. */
#define GP_CMP_HELP_SIZE                                                              \
	"  SIZE                   decimal: 80GB or 80G, 500MB (kB, MB, GB, TB or K, M,\n"  \
	"                         G, T: powers of 1000, a spec sheet's GB); binary:\n"     \
	"                         70GiB, 512MiB (KiB, MiB, GiB, TiB: powers of 1024,\n"   \
	"                         what gpuprof prints); 4096B. A decimal limit is\n"       \
	"                         written back in binary too: \"80 GB = 74.5 GiB\"\n"

/* "PROG: message" and the --help hint on stderr; returns GP_CMP_BAD. */
int gp_cmp_usage(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What getopt_long() rejected (see gp_option_error() in viewer/cli.h). */
int gp_cmp_option_error(const char *prog, int c, const char *word);
/* One of the shared options: 0 when taken, GP_CMP_BAD (said) when its
 * value is wrong, -1 when c is not one of them. */
int gp_cmp_common_option(const char *prog, struct gp_cmp_settings *s, int c, const char *arg);
/* A --max-increase / --max-peak value into l; 0, or GP_CMP_BAD (said). */
int gp_cmp_limit_option(const char *prog, const char *opt, const char *arg, struct gp_cmp_limit *l,
			int percent_ok);

#endif
