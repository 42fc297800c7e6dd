/* Tables, once for both readers: aligned columns for a terminal or a CI
 * log, GitHub-flavoured Markdown for a PR comment or a job summary. The
 * reports build the same rows for both; only the cells' escaping differs. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"
#include "cmp.h"

void cmp_table_init(struct cmp_table *t, size_t ncols, const char *const *head, const char *align)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->head = head;
	t->align = align;
}

void cmp_table_row(struct cmp_table *t, ...)
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

void cmp_table_free(struct cmp_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* Columns line up in characters, not bytes: command lines may be UTF-8. */
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

void cmp_table_print(const struct cmp_table *t, enum cmp_fmt f, FILE *out, int indent)
{
	size_t w[16] = { 0 };
	size_t nc = t->ncols < 16 ? t->ncols : 16;

	if (f == CMP_FMT_MD) {
		for (size_t c = 0; c < nc; c++)
			fprintf(out, "| %s ", t->head[c]);
		fputs("|\n", out);
		for (size_t c = 0; c < nc; c++)
			fputs(t->align[c] == 'r' ? "|--:" : "|:--", out);
		fputs("|\n", out);
		for (size_t r = 0; r < t->nrows; r++) {
			for (size_t c = 0; c < nc; c++)
				fprintf(out, "| %s ", t->cells[r * t->ncols + c]);
			fputs("|\n", out);
		}
		return;
	}
	for (size_t c = 0; c < nc; c++) {
		w[c] = width(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t x = width(t->cells[r * t->ncols + c]);

			if (x > w[c])
				w[c] = x;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		size_t used = nc;

		/* no trailing blanks for the empty cells that end a row */
		while (r && used > 1 && !t->cells[(r - 1) * t->ncols + used - 1][0])
			used--;
		pad(out, (size_t)indent);
		for (size_t c = 0; c < used; c++) {
			const char *s = r ? t->cells[(r - 1) * t->ncols + c] : t->head[c];
			size_t gap = w[c] - width(s);
			int last = c + 1 == used;

			if (c)
				fputs("  ", out);
			if (t->align[c] == 'r')
				pad(out, gap);
			fputs(s, out);
			if (t->align[c] != 'r' && !last)
				pad(out, gap);
		}
		fputc('\n', out);
	}
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

char *cmp_cell(char *buf, size_t cap, enum cmp_fmt f, const char *s, int code, long max_chars)
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
	if (f == CMP_FMT_MD && code) {
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
		char one[2] = { (char)c, 0 };

		if (c < 0x20 || c == 0x7f) {
			PUT(f == CMP_FMT_MD ? " " : "?");
			continue;
		}
		if (f == CMP_FMT_MD) {
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

void cmp_fmt_delta(char *buf, size_t cap, int64_t d)
{
	char b[32];

	if (!d) {
		snprintf(buf, cap, "0 B");
		return;
	}
	an_fmt_bytes(b, sizeof(b), d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d);
	snprintf(buf, cap, "%c%s", d < 0 ? '-' : '+', b);
}

void cmp_fmt_percent(char *buf, size_t cap, double p)
{
	double a = p < 0 ? -p : p;

	if (p == 0) {
		snprintf(buf, cap, "0%%");
		return;
	}
	snprintf(buf, cap, a >= 10 ? "%+.1f%%" : "%+.2f%%", p);
}
