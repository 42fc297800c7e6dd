/* Tables for the reports people read, one implementation for all of them
 * (analyze's text report, compare's and check's text and Markdown):
 * columns aligned in characters for a terminal or a CI log, or
 * GitHub-flavoured Markdown for a PR comment or a job summary. A renderer
 * builds the rows once; only the cells' escaping (gp_table_cell) and the
 * printing differ between the two formats.
 *
 * Usage: gp_table_init, gp_table_row for the heading and then for each row,
 * gp_table_print, gp_table_free. */
#ifndef GPUPROF_RENDER_TABLE_H
#define GPUPROF_RENDER_TABLE_H

#include <stddef.h>
#include <stdio.h>

enum gp_table_fmt { GP_TABLE_TEXT, GP_TABLE_MD };

struct gp_table {
	size_t ncols;
	const char *align; /* 'l' or 'r' per column; borrowed, outlives the table */
	char **cells;      /* nrows * ncols, owned; row 0 is the heading */
	size_t nrows, cap;
	int oom;           /* a row was lost: gp_table_print says so */
};

/* How a text table is set: indent before every line; head_on and
 * head_off around the heading's text (bold on a terminal), or "" / NULL. */
struct gp_table_style {
	const char *indent;
	const char *head_on, *head_off;
};

void gp_table_init(struct gp_table *t, size_t ncols, const char *align);
/* Takes ncols strings, copied; NULL is an empty cell. The first row is the
 * heading. Out of memory: the row is dropped and t->oom set. */
void gp_table_row(struct gp_table *t, ...);
void gp_table_free(struct gp_table *t);

/* Text: columns padded to their widest cell, two blanks between them, no
 * blanks at the end of a line (a row's empty last cells leave none). The
 * style may be NULL (no indent, a plain heading). Markdown: the heading, the
 * alignment row, then the rows; cells as given (gp_table_cell escapes them).
 * Returns 0, or -ENOMEM when rows were lost (what is left is printed). */
int gp_table_print(const struct gp_table *t, enum gp_table_fmt f, FILE *out,
		   const struct gp_table_style *style);

/* A cell from an arbitrary string, into buf (cap bytes), returned.
 * Text: what could act on a terminal escaped (term.h). Markdown: as plain text, or as code
 * (names of layers, command lines), escaped for a table cell. More than
 * max_chars characters: cut at the end with "..."; max_chars < 0: the last
 * -max_chars kept, "..." before them (a layer's path ends with what
 * matters); 0: no limit. NULL is "-". */
char *gp_table_cell(char *buf, size_t cap, enum gp_table_fmt f, const char *s, int code,
		    long max_chars);

#endif
