/* Tables for the reports people read (table.h). Text columns line up in
 * characters, not bytes: command lines and layer names may be UTF-8. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/render/table.h"
#include "viewer/render/term.h"

void gp_table_init(struct gp_table *t, size_t ncols, const char *align)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->align = align;
}

void gp_table_row(struct gp_table *t, ...)
{
	va_list ap;

	if (t->oom)
		return;
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));

		if (!c) {
			t->oom = 1;
			return;
		}
		t->cells = c;
		t->cap = cap;
	}
	va_start(ap, t);
	for (size_t i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);
		char *d = strdup(s ? s : "");

		if (!d) {
			for (size_t j = 0; j < i; j++)
				free(t->cells[t->nrows * t->ncols + j]);
			t->oom = 1;
			break;
		}
		t->cells[t->nrows * t->ncols + i] = d;
	}
	va_end(ap);
	if (!t->oom)
		t->nrows++;
}

void gp_table_free(struct gp_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* display width: UTF-8 code points */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

/* Writes s but holds back its trailing blanks: *held blanks go out before
 * the next text of the line, and never at its end. */
static void put_held(FILE *out, const char *s, size_t *held)
{
	size_t len = strlen(s), text = len;

	while (text && s[text - 1] == ' ')
		text--;
	if (text) {
		pad(out, *held);
		fwrite(s, 1, text, out);
		*held = 0;
	}
	*held += len - text;
}

static void print_md(const struct gp_table *t, size_t nc, FILE *out)
{
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < nc; c++)
			fprintf(out, "| %s ", t->cells[r * t->ncols + c]);
		fputs("|\n", out);
		if (r)
			continue;
		for (size_t c = 0; c < nc; c++)
			fputs(t->align[c] == 'r' ? "|--:" : "|:--", out);
		fputs("|\n", out);
	}
}

/* Text cells: as a terminal may show them (term.h), escaped once, widths
 * taken from what is printed. */
static int print_text(const struct gp_table *t, size_t nc, FILE *out,
		      const struct gp_table_style *st)
{
	size_t *w = calloc(nc ? nc : 1, sizeof(*w)), ncells = t->nrows * t->ncols;
	char **cell = calloc(ncells ? ncells : 1, sizeof(*cell));
	const char *indent = st && st->indent ? st->indent : "";
	int bold = st && st->head_on && *st->head_on, rc = -ENOMEM;

	if (!w || !cell)
		goto out;
	for (size_t i = 0; i < ncells; i++) {
		cell[i] = gp_term_escape_dup(t->cells[i]);
		if (!cell[i])
			goto out;
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < nc; c++) {
			size_t x = width(cell[r * t->ncols + c]);

			if (x > w[c])
				w[c] = x;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		size_t held = 0;

		fputs(indent, out);
		if (bold && r == 0)
			fputs(st->head_on, out);
		for (size_t c = 0; c < nc; c++) {
			const char *s = cell[r * t->ncols + c];
			size_t gap = w[c] - width(s);

			if (c)
				held += 2;
			if (t->align[c] == 'r')
				held += gap;
			put_held(out, s, &held);
			if (t->align[c] != 'r')
				held += gap;
		}
		if (bold && r == 0 && st->head_off)
			fputs(st->head_off, out);
		fputc('\n', out);
	}
	rc = 0;
out:
	for (size_t i = 0; cell && i < ncells; i++)
		free(cell[i]);
	free(cell);
	free(w);
	return rc;
}

int gp_table_print(const struct gp_table *t, enum gp_table_fmt f, FILE *out,
		   const struct gp_table_style *style)
{
	if (f == GP_TABLE_MD)
		print_md(t, t->ncols, out);
	else if (print_text(t, t->ncols, out, style))
		return -ENOMEM;
	return t->oom ? -ENOMEM : 0;
}

/* Where to cut a string of more than max characters, at a character
 * boundary. */
static size_t cut_at(const char *s, size_t max)
{
	size_t chars = 0, i = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80 && chars++ == max)
			return i;
	}
	return i;
}

/* Where the last max characters start. */
static size_t tail_from(const char *s, size_t max)
{
	size_t chars = 0, i = strlen(s);

	while (i > 0) {
		i--;
		if (((unsigned char)s[i] & 0xC0) != 0x80 && ++chars == max)
			return i;
	}
	return 0;
}

char *gp_table_cell(char *buf, size_t cap, enum gp_table_fmt f, const char *s, int code,
		    long max_chars)
{
	size_t n = 0, len, ticks = 0, run = 0;
	int cut = 0, lead = 0, space = 0;

	if (!cap)
		return buf;
	if (!s)
		s = "-";
	if (max_chars < 0) {
		size_t from = tail_from(s, (size_t)-max_chars);

		lead = from > 0;
		s += from;
		len = strlen(s);
	} else {
		len = cut_at(s, max_chars ? (size_t)max_chars : (size_t)-1);
		cut = s[len] != '\0';
	}
	/* A code span is fenced by more backticks than it holds in a row. */
	if (f == GP_TABLE_MD && code) {
		for (size_t i = 0; i < len; i++) {
			run = s[i] == '`' ? run + 1 : 0;
			if (run > ticks)
				ticks = run;
		}
		ticks++;
		/* CommonMark strips one space from each end when both have one,
		 * and a backtick at an end would join the fence */
		space = len && (s[0] == '`' || s[len - 1] == '`' ||
				(s[0] == ' ' && s[len - 1] == ' '));
	}
#define PUT(str)                                                   \
	do {                                                       \
		const char *p_ = (str);                            \
		size_t l_ = strlen(p_);                            \
		if (n + l_ >= cap)                                 \
			goto full;                                 \
		memcpy(buf + n, p_, l_);                           \
		n += l_;                                           \
	} while (0)
	for (size_t i = 0; i < ticks; i++)
		PUT("`");
	if (space)
		PUT(" ");
	if (lead)
		PUT("...");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char one[2] = { (char)c, 0 }, esc[GP_TERM_ESC_MAX];
		size_t k = gp_term_unsafe(s + i, len - i, esc);

		if (k) { /* what could act on a terminal or reorder a line */
			PUT(esc);
			i += k - 1;
			continue;
		}
		if (c >= 0x80) { /* other UTF-8: whole */
			size_t l = gp_term_char_len(s + i, len - i);

			if (n + l >= cap)
				goto full;
			memcpy(buf + n, s + i, l);
			n += l;
			i += l - 1;
			continue;
		}
		if (f == GP_TABLE_MD) {
			/* a pipe ends a table cell even inside a code span */
			if (c == '|') {
				PUT("\\|");
				continue;
			}
			if (!code) {
				if (c == '<') {
					PUT("&lt;");
					continue;
				}
				if (c == '>') {
					PUT("&gt;");
					continue;
				}
				if (c == '&') {
					PUT("&amp;");
					continue;
				}
				if (strchr("\\`*_[]~", c)) {
					PUT("\\");
				}
			}
		}
		PUT(one);
	}
	if (cut)
		PUT("...");
	if (space)
		PUT(" ");
	for (size_t i = 0; i < ticks; i++)
		PUT("`");
#undef PUT
	buf[n] = '\0';
	return buf;
full:
	/* cap is far above what any cell needs; cut rather than fail */
	buf[n < cap ? n : cap - 1] = '\0';
	return buf;
}
