/* gpuprof compare and gpuprof check, the library behind viewer/cmd_compare.c
 * and viewer/cmd_check.c: a peak-memory gate for CI.
 *
 * Inputs are traces (analyzed here, in-process, by viewer/analyze/) or the
 * `gpuprof analyze --json` summaries of them (schema gpuprof.analyze/1). Both
 * are untrusted: anything wrong ends the call with one line on stderr and
 * GP_CMP_BAD, never a crash. README.md in this directory says how processes
 * are matched, what the limits mean and what the JSON report holds. */
#ifndef GPUPROF_COMPARE_H
#define GPUPROF_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exporters/amount.h"

#define GP_CMP_SCHEMA "gpuprof.compare/1"
#define GP_CHECK_SCHEMA "gpuprof.check/1"

/* The exit statuses: 1 only when a verdict was reached and it is "over",
 * so that CI can tell a regression from a broken job. */
enum {
	GP_CMP_OK = 0,
	GP_CMP_OVER = 1,
	GP_CMP_BAD = 2, /* bad usage, bad input, or no verdict (out of memory, write error) */
};

enum gp_cmp_metric {
	GP_CMP_PEAK,           /* what analyze calls the peak: allocated, or reserved in native mode */
	GP_CMP_PEAK_ALLOCATED,
	GP_CMP_PEAK_RESERVED,
};

enum gp_cmp_format { GP_CMP_TEXT, GP_CMP_JSON, GP_CMP_MARKDOWN };

/* The largest size an input or a limit may say (exporters/amount.h) */
#define GP_CMP_MAX_BYTES GP_AMOUNT_MAX_BYTES

/* A limit as people write it: "12 GiB", "1.5 GiB", "256 MiB", else three
 * significant digits. Given in a decimal unit (decimal: its bytes, as
 * gp_cmp_amount's), in that unit and in binary: "80 GB = 74.5 GiB". cap:
 * 64 holds any. */
void gp_cmp_fmt_limit(char *buf, size_t cap, uint64_t v, uint64_t decimal);

struct gp_cmp_limit {
	int has_percent; /* compare: of BASE's peak; check: of the device's memory */
	double percent;
	int has_bytes;
	uint64_t bytes;
	uint64_t decimal; /* bytes given in a decimal unit: gp_cmp_amount's */
};

/* compare's tolerance when none is given: 1% and 2 MiB (both must be
 * exceeded). Peaks of repeated runs of one program are equal to the byte
 * in tensor mode and may differ by a segment in native mode; README.md
 * says why these numbers, and bench/RESULTS.md (repeated runs) what
 * bench/compare_noise.py measured. */
void gp_cmp_default_limit(struct gp_cmp_limit *l);

struct gp_cmp_files {
	const char *const *paths;
	size_t n;
};

struct json_object;

struct gp_cmp_settings {
	const char *prog;        /* "gpuprof compare", what stderr lines start with */
	struct gp_cmp_files base; /* check: the TRACEs */
	struct gp_cmp_files new_; /* compare only */
	/* compare: an increase fails when over every limit given;
	 * check: the peak fails when over the limit */
	struct gp_cmp_limit limit;
	enum gp_cmp_metric metric;
	enum gp_cmp_format format;
	int device;   /* this device index only; -1: all */
	int top;      /* rows per table in text and Markdown */
	int progress; /* analyze's progress line while reading traces */
	/* a program that did not get past an out-of-memory error passes
	 * (--allow-oom); else it fails, whatever its peak */
	int allow_oom;
	FILE *out;
	/* format GP_CMP_JSON: when set, the report is handed over here as a
	 * document (the caller's, json_object_put) instead of written to out */
	struct json_object **json;
};

/* What a file given to compare, check or report is, from its first bytes:
 * 1 a summary (JSON that starts with '{', gzipped or not), 0 a trace; or
 * -errno with one line in err. */
int gp_cmp_file_is_summary(const char *path, char *err, size_t cap);
/* A summary read as strict JSON (UTF-8, finite numbers, nesting bounded,
 * at most 512 MiB) whose schema is gpuprof.analyze/1; nothing else is
 * checked. *out is the caller's (json_object_put). 0 or -errno with err. */
int gp_cmp_read_summary(const char *path, struct json_object **out, char *err, size_t cap);

/* Each returns the exit status; the report goes to s->out, messages to stderr. */
int gp_cmp_compare(const struct gp_cmp_settings *s);
int gp_cmp_check(const struct gp_cmp_settings *s);

#endif
