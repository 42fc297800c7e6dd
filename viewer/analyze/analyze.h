/* gpuprof analyze, the library behind `gpuprof analyze` (viewer/cmd_analyze.c),
 * compare and check (viewer/compare/) and the reader's fuzz target
 * (tests/analyze/fuzz_reader.c).
 *
 * gp_an_analyze() reads one or more traces of a run, in time order, into a
 * result in memory (result.h); gp_an_render_text() and gp_an_render_json()
 * write it as the report (text, or JSON as in SCHEMA.md); gp_an_run() does
 * both. Traces are untrusted input: anything wrong with them ends the call
 * with one line in err and GP_AN_BAD_INPUT, never a crash. */
#ifndef GPUPROF_ANALYZE_H
#define GPUPROF_ANALYZE_H

#include <stddef.h>
#include <stdio.h>

#define GP_AN_SCHEMA "gpuprof.analyze/1"

enum {
	GP_AN_OK = 0,
	GP_AN_FAIL = 1,      /* I/O or out of memory */
	GP_AN_BAD_INPUT = 2, /* not a trace, damaged, absurd; or nothing matched a filter */
};

/* A trace: a file (path), or bytes in memory (mem, len; path names it). */
struct gp_an_input {
	const char *path;
	const void *mem;
	size_t len;
};

struct gp_an_settings {
	const struct gp_an_input *inputs;
	size_t n_inputs;
	int top;          /* top N single allocations (text: and rows of each grouping) */
	int device;       /* report this device index only; -1: all */
	long pid;         /* report this process only; -1: all */
	int progress;     /* progress line on stderr while reading */
	int timeline;     /* each device's memory over time (result.h, gp_an_timeline) */
	int has_at;       /* what was live at at_s, seconds from the result's time origin */
	double at_s;
	/* gp_an_run() only: */
	int json;         /* JSON instead of text */
	int color;        /* ANSI colors in the text report */
	FILE *out;        /* where the report goes */
};

struct gp_an_result;

/* Analyzes the inputs into *out, a new result the caller frees with
 * gp_an_result_free() (NULL on failure). Returns GP_AN_OK, GP_AN_FAIL or
 * GP_AN_BAD_INPUT; on failure err holds one line (no trailing newline, no
 * "gpuprof: " prefix). note, when not NULL, is called for each remark about
 * the input worth a line on stderr (a trace cut short). */
int gp_an_analyze(const struct gp_an_settings *s, struct gp_an_result **out, char *err,
		  size_t errcap, void (*note)(void *ctx, const char *line), void *note_ctx);
void gp_an_result_free(struct gp_an_result *r);

/* The reports of a result: 0 or -errno (-ENOMEM, -EIO). top: rows of each
 * grouping in the text. */
int gp_an_render_text(const struct gp_an_result *r, FILE *out, int color, int top);
int gp_an_render_json(const struct gp_an_result *r, FILE *out);
/* The JSON report as json-c's document, the caller's (json_object_put);
 * NULL when out of memory. */
struct json_object;
struct json_object *gp_an_json_doc(const struct gp_an_result *r);

/* gp_an_analyze(), then the report (s->json, s->color) to s->out. */
int gp_an_run(const struct gp_an_settings *s, char *err, size_t errcap,
	      void (*note)(void *ctx, const char *line), void *note_ctx);

#endif
