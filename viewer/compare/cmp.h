/* Internals of gpuprof compare/check, shared by the files of this directory:
 *   input.c    files of a side: directories, child traces, trace or summary;
 *              traces analyzed in this process into a result (result.h)
 *   summary.c  a gpuprof.analyze/1 document, validated, into a result
 *   unit.c     the units of a result, from either: its devices, read
 *              where they are, and the rows a diff merges
 *   match.c    which process/GPU of BASE goes with which of NEW
 *   diff.c     the metric, the verdict, what changed at the peak
 *   render.c   the text and Markdown reports (their tables: viewer/render/);
 *              json.c the JSON reports
 *   run.c      gp_cmp_compare() and gp_cmp_check(): the steps in order
 *   limit.c    --max-increase/--max-peak values; options.c the options
 *              both commands share (options.h)
 * Every function returns 0 or -errno; err buffers get one line. */
#ifndef GPUPROF_CMP_H
#define GPUPROF_CMP_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compare.h"
#include "result.h"

#define CMP_ERR 1024

/* Where a value being read is, for the one line that says it is wrong:
 * "INPUT: PATH: what" into err (cap bytes). Borrowed strings. */
struct cmp_where {
	const char *input; /* the summary, or the side's label */
	char *err;
	size_t cap;
};
/* Says what is wrong at path ("" for the input as a whole); -EINVAL. */
int cmp_bad(const struct cmp_where *w, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A growable list of owned strings (notes for the report). */
struct cmp_notes {
	char **s;
	size_t n, cap;
};
int cmp_note(struct cmp_notes *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmp_notes_free(struct cmp_notes *l);

/* Bytes under one name at the peak: a category, or a layer's own bytes
 * (made in that layer, not in the layers below it). */
struct cmp_row {
	char *name;
	uint64_t bytes;
};

/* One process on one GPU: a device of a result (struct cmp_side keeps the
 * results), read where it is, and what compare derives from it. Pointers
 * into the result are borrowed; rows and top are owned. */
struct cmp_unit {
	const struct gp_an_device *dev; /* the result's; from a summary, only
					 * what summary.c reads is filled */
	const struct gp_an_trace *tr;   /* its trace: the result's traces[dev->trace] */
	const char *input;   /* the file it was read from (a summary, or the first trace) */
	/* failed allocations the program did not get past (fatal), and the
	 * one to name: the result's first listed fatal one (NULL: none
	 * listed). guessed: a summary written before analyze said which were
	 * fatal, where every one not recovered counts. */
	uint64_t oom_fatal;
	const struct gp_an_oom *oom_lead;
	int oom_fatal_guessed;
	/* what was live at the peak (dev->peak), as rows a diff merges */
	int has_cats;          /* null in cuda mode */
	struct cmp_row *cats, *layers; /* owned */
	size_t ncats, nlayers;
	const struct gp_an_alloc *top; /* the peak's top (dev->peak.set's); none without a peak */
	size_t ntop;
	int top_complete;      /* every allocation alive at the peak is in top */
	uint64_t top_cut;      /* else: the smallest one listed */
};

struct cmp_side {
	const char *label;     /* BASE, NEW, TRACE */
	char **inputs;         /* the files read, in order (owned) */
	size_t ninputs;
	struct gp_an_result **results; /* owned: the traces' analysis, each summary's */
	size_t nresults;
	struct cmp_unit *u;
	size_t n;
	size_t nprocs;         /* distinct processes among u */
	struct cmp_notes notes;
};

void cmp_side_free(struct cmp_side *s);

/* input.c: reads the files (expanding directories, adding the traces of
 * child processes beside a trace), analyzes traces, validates summaries,
 * and fills side->u. device >= 0 keeps that device index only. */
int cmp_side_load(struct cmp_side *side, const struct gp_cmp_files *files, int device,
		  int progress, const char *prog, char *err, size_t cap);

/* summary.c: a gpuprof.analyze/1 document (from file input) into *out, a
 * new result holding what compare uses: the members
 * viewer/analyze/result/result_schema.def marks REQ, NUL, OPT or HAND (its READ
 * column), each checked. Notes about the options go to side->notes. */
int cmp_summary_read(struct cmp_side *side, struct json_object *doc, const char *input,
		     struct gp_an_result **out, char *err, size_t cap);

/* unit.c: the units of result r (borrowed: side->results keeps it, and
 * the units point into it) added to side; input: the summary it was read from, NULL for traces. device >=
 * 0 keeps that device index only. Checks that sizes add up. */
int cmp_units_add(struct cmp_side *side, const struct gp_an_result *r, const char *input, int device,
		  char *err, size_t cap);
void cmp_unit_free(struct cmp_unit *u);

/* A change of one name between BASE and NEW (delta != 0). */
struct cmp_change {
	const char *name;
	uint64_t base, new_;
	int64_t delta;
};

/* A change among the largest allocations. An allocation with no
 * counterpart may be under the other side's list cut: then *_below holds
 * that cut, the value is not known, and delta is the least change. */
struct cmp_achange {
	const struct gp_an_alloc *a; /* for its layer, category... */
	int base_known, new_known;
	uint64_t base, new_;
	uint64_t base_below, new_below; /* not known: less than or equal to this */
	size_t count;                   /* allocations with this same change */
	int64_t delta;                  /* of them all */
};

enum cmp_verdict {
	CMP_REGRESSION, /* grew beyond the limit */
	CMP_GREW,       /* grew within the limit */
	CMP_UNCHANGED,
	CMP_SHRANK,
	CMP_MISSING,    /* in BASE, not in NEW: a failure */
	CMP_ONLY_NEW,   /* in NEW, not in BASE: reported */
};

struct cmp_pair {
	const struct cmp_unit *b, *n; /* either may be NULL */
	const char *matched_by;       /* NULL when unmatched */
	struct cmp_notes notes;
	enum cmp_verdict verdict;
	const char *what;             /* "peak allocated"... */
	uint64_t vb, vn;              /* the metric */
	int64_t delta;
	int has_percent;
	double percent;
	uint64_t allowed;
	int has_breakdown;
	struct cmp_change *cats, *layers;
	size_t ncats, nlayers;
	struct cmp_achange *allocs;
	size_t nallocs;
};

/* match.c: pairs in BASE's order, then NEW's processes that have none. */
int cmp_match(const struct cmp_side *base, const struct cmp_side *new_, struct cmp_pair **out,
	      size_t *nout);
void cmp_pairs_free(struct cmp_pair *p, size_t n);

/* diff.c */
const char *cmp_metric_option(enum gp_cmp_metric m);
/* The metric of a unit and what it is called; -ENODATA when not known
 * (err says why and what to do). */
int cmp_metric_value(const struct cmp_unit *u, enum gp_cmp_metric m, const char *side,
		     uint64_t *v, const char **what, char *err, size_t cap);
uint64_t cmp_allowed(const struct gp_cmp_limit *l, uint64_t base);
int cmp_diff(struct cmp_pair *p, const struct gp_cmp_settings *s, char *err, size_t cap);

/* render.c, json.c */
int cmp_render_compare(const struct gp_cmp_settings *s, const struct cmp_side *base,
		       const struct cmp_side *new_, const struct cmp_pair *p, size_t n, int over);
int cmp_json_compare(const struct gp_cmp_settings *s, const struct cmp_side *base,
		     const struct cmp_side *new_, const struct cmp_pair *p, size_t n, int over);

/* check: one device of the trace against the limit */
struct cmp_check {
	const struct cmp_unit *u;
	const char *what;
	uint64_t value, limit;
	uint64_t limit_decimal; /* the limit given in a decimal unit: gp_amount's */
	int over;
	int oom;      /* its program did not get past an out-of-memory error */
};
int cmp_render_check(const struct gp_cmp_settings *s, const struct cmp_side *side,
		     const struct cmp_check *c, size_t n, int over);
int cmp_json_check(const struct gp_cmp_settings *s, const struct cmp_side *side,
		   const struct cmp_check *c, size_t n, int over);

/* oom.c: the line that says u's program did not get past an
 * out-of-memory error ("FAIL: rank 1 (process 42) ran out of memory at
 * step 8: ..."), or that it was allowed; md: Markdown (no "FAIL: ") */
void cmp_oom_line(char *buf, size_t cap, const struct cmp_unit *u, int md, int allowed);

/* "cuda:0", or "cuda:0 of process 4242" when several processes of the
 * side used that device index */
void cmp_unit_where(char *buf, size_t cap, const struct cmp_unit *u, const struct cmp_side *side);
/* Rows largest first; a new array of pointers into r. */
int cmp_rows_sorted(const struct cmp_row *r, size_t n, const struct cmp_row ***out);

#endif
