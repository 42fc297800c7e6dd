/* gpuprof report, the library behind viewer/cmd_report.c: one HTML page
 * that shows a run's memory (who holds it at the peak, what grows, why an
 * allocation failed), made from its traces or its `analyze --json`
 * summary, with nothing to fetch: the page's code, its chart libraries and
 * the data are all in it (page.c says how it is laid out and kept inert).
 *
 * Inputs are untrusted: anything wrong ends the call with one line in err
 * and GP_AN_BAD_INPUT (analyze.h), never a crash, and no page is written. */
#ifndef GPUPROF_REPORT_H
#define GPUPROF_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* What the page's data says it is (page.c, viewer/report/README.md). */
#define GP_REPORT_SCHEMA "gpuprof.report/1"

struct gp_report_settings {
	/* the run: its traces (one process each), or one summary */
	const char *const *run;
	size_t nrun;
	/* --base: another run, the same way; nbase 0 when none */
	const char *const *base;
	size_t nbase;
	const char *out;   /* the page's path: written whole, or not at all */
	int force;         /* out may be replaced when it exists */
	int top;           /* allocations and rows kept per grouping */
	int progress;      /* analyze's progress line while reading traces */
};

/* Writes the page. GP_AN_OK, GP_AN_FAIL (I/O, out of memory) or
 * GP_AN_BAD_INPUT, with one line in err (no "gpuprof: ", no newline). */
int gp_report_write(const struct gp_report_settings *s, char *err, size_t errcap);

/* The page for data, a JSON text (the report's data, GP_REPORT_SCHEMA) to
 * out. 0, -EIO, -ENOMEM, or -EINVAL when an embedded asset could end its
 * element (a build problem). */
int gp_report_page(FILE *out, const char *data, size_t len);

#endif
