/* The reports' tables (viewer/render/table.h): columns aligned in
 * characters, no blanks at the end of a line, the heading set apart, long
 * cells whole; Markdown rows; cells escaped and cut. And what the text
 * reports escape for a terminal (viewer/render/term.h). */
#include "check.h"
#include "viewer/render/table.h"
#include "viewer/render/term.h"

#include <stdlib.h>

/* what gp_table_print writes, in a string the caller frees */
static char *printed(const struct gp_table *t, enum gp_table_fmt f, const struct gp_table_style *st,
		     int *rc)
{
	char *s = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&s, &n);

	if (!out)
		abort();
	*rc = gp_table_print(t, f, out, st);
	fclose(out);
	return s;
}

static void text(void)
{
	struct gp_table t;
	struct gp_table_style plain = { "  ", NULL, NULL }, bold = { "  ", "<B>", "</B>" };
	char *s;
	int rc;

	gp_table_init(&t, 3, "lrl");
	gp_table_row(&t, "name", "bytes", "note");
	gp_table_row(&t, "\xc3\xa4-layer", "1 KiB", "x"); /* ä: one character, two bytes */
	gp_table_row(&t, "b", "12 MiB", "");               /* an empty last cell */
	gp_table_row(&t, "c  ", NULL, "");                  /* blanks that end a cell */
	s = printed(&t, GP_TABLE_TEXT, &plain, &rc);
	CHECK_EQ_INT(rc, 0);
	CHECK_STR(s, "  name      bytes  note\n"
		     "  \xc3\xa4-layer   1 KiB  x\n"
		     "  b        12 MiB\n"
		     "  c\n");
	free(s);
	s = printed(&t, GP_TABLE_TEXT, &bold, &rc);
	CHECK_STR(s, "  <B>name      bytes  note</B>\n"
		     "  \xc3\xa4-layer   1 KiB  x\n"
		     "  b        12 MiB\n"
		     "  c\n");
	free(s);
	s = printed(&t, GP_TABLE_TEXT, NULL, &rc);
	CHECK_STR(s, "name      bytes  note\n"
		     "\xc3\xa4-layer   1 KiB  x\n"
		     "b        12 MiB\n"
		     "c\n");
	free(s);
	gp_table_free(&t);

	/* a right-aligned last column is padded before its text only */
	gp_table_init(&t, 2, "lr");
	gp_table_row(&t, "a", "10");
	gp_table_row(&t, "bb", "1");
	gp_table_row(&t, "ccc", "");
	s = printed(&t, GP_TABLE_TEXT, NULL, &rc);
	CHECK_STR(s, "a    10\nbb    1\nccc\n");
	free(s);
	gp_table_free(&t);
}

/* a cell of any length is printed whole, and the columns after it too */
static void long_cell(void)
{
	struct gp_table t;
	size_t len = 10000;
	char *name = malloc(len + 1), *want = malloc(2 * len + 64), *s;
	int rc;

	if (!name || !want)
		abort();
	memset(name, 'x', len);
	name[len] = '\0';
	gp_table_init(&t, 2, "lr");
	gp_table_row(&t, "layer", "bytes");
	gp_table_row(&t, name, "1 KiB");
	s = printed(&t, GP_TABLE_TEXT, NULL, &rc);
	snprintf(want, 2 * len + 64, "layer%*s  bytes\n%s  1 KiB\n", (int)(len - 5), "", name);
	CHECK_STR(s, want);
	free(s);
	gp_table_free(&t);
	free(name);
	free(want);
}

static void markdown(void)
{
	struct gp_table t;
	char *s;
	int rc;

	gp_table_init(&t, 3, "lrl");
	gp_table_row(&t, "GPU", "peak", "verdict");
	gp_table_row(&t, "cuda:0", "1 KiB", "");
	s = printed(&t, GP_TABLE_MD, NULL, &rc);
	CHECK_EQ_INT(rc, 0);
	CHECK_STR(s, "| GPU | peak | verdict |\n|:--|--:|:--|\n| cuda:0 | 1 KiB |  |\n");
	free(s);
	gp_table_free(&t);
}

static void cells(void)
{
	char b[128];

	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, NULL, 0, 0), "-");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "a\tb\x7f|<", 0, 0), "a\\x09b\\x7F|<");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, "a\tb", 0, 0), "a\\x09b");
	/* C1 (U+009B: a terminal's CSI) and a bidi override, in either format */
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "x\xc2\x9b" "2Jy\xe2\x80\xae" "z", 0, 0),
		  "x\\u009B2Jy\\u202Ez");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, "\xe2\x81\xa6" "a", 1, 0), "`\\u2066a`");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, "a|b<c>&*_[x]~`\\", 0, 0),
		  "a\\|b&lt;c&gt;&amp;\\*\\_\\[x\\]\\~\\`\\\\");
	/* code: a fence longer than any run of backticks inside; a pipe escaped */
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, "<Net>.fc|1", 1, 0), "`<Net>.fc\\|1`");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, "a``b", 1, 0), "```a``b```");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, "`a", 1, 0), "`` `a ``");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, " a ", 1, 0), "`  a  `");
	/* cut at the end, or the end kept; in characters, not bytes */
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "abcdef", 0, 3), "abc...");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "abcdef", 0, -3), "...def");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "abc", 0, 3), "abc");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "abc", 0, -3), "abc");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "\xc3\xa4\xc3\xb6\xc3\xbc", 0, 2),
		  "\xc3\xa4\xc3\xb6...");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "\xc3\xa4\xc3\xb6\xc3\xbc", 0, -2),
		  "...\xc3\xb6\xc3\xbc");
	/* a buffer too small: cut, still a string */
	CHECK_STR(gp_table_cell(b, 4, GP_TABLE_TEXT, "abcdef", 0, 0), "abc");
}

/* As many columns as the table has: none is dropped. */
static void wide(void)
{
	struct gp_table t;
	char *s;
	int rc;

	gp_table_init(&t, 18, "llllllllllllllllll");
	gp_table_row(&t, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
		     "o", "p", "q", "r");
	s = printed(&t, GP_TABLE_TEXT, NULL, &rc);
	CHECK_EQ_INT(rc, 0);
	CHECK_STR(s, "a  b  c  d  e  f  g  h  i  j  k  l  m  n  o  p  q  r\n");
	free(s);
	s = printed(&t, GP_TABLE_MD, NULL, &rc);
	CHECK_EQ_INT(rc, 0);
	CHECK_STR(s, "| a | b | c | d | e | f | g | h | i | j | k | l | m | n | o | p | q | r |\n"
		     "|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|:--|\n");
	free(s);
	gp_table_free(&t);
}

/* every character that could act on a terminal or reorder a line, and
 * every byte that is not UTF-8; nothing else */
static void term(void)
{
	char b[64], *d;

	CHECK_STR(gp_term_escape(b, sizeof(b), "a\x1b[2Jb\x7f\n"), "a\\x1B[2Jb\\x7F\\x0A");
	CHECK_STR(gp_term_escape(b, sizeof(b), "\xc2\x80" "\xc2\x9f" "\xc2\xa0"), "\\u0080\\u009F\xc2\xa0");
	CHECK_STR(gp_term_escape(b, sizeof(b), "\xd8\x9c" "\xe2\x80\x8e" "\xe2\x80\x8f" "\xe2\x80\xaa"
					       "\xe2\x80\xae" "\xe2\x81\xa6" "\xe2\x81\xa9"),
		  "\\u061C\\u200E\\u200F\\u202A\\u202E\\u2066\\u2069");
	/* U+202F and U+2065, beside them, are kept; so are other scripts and emoji */
	CHECK_STR(gp_term_escape(b, sizeof(b), "\xe2\x80\xaf" "\xe2\x81\xa5" "\xc3\xa4\xe4\xb8\xad\xf0\x9f\x98\x80"),
		  "\xe2\x80\xaf" "\xe2\x81\xa5" "\xc3\xa4\xe4\xb8\xad\xf0\x9f\x98\x80");
	/* not UTF-8: a lone continuation, an overlong '/', a surrogate, a cut sequence */
	CHECK_STR(gp_term_escape(b, sizeof(b), "\x80" "\xc0\xaf" "\xed\xa0\x80" "\xe2\x80"),
		  "\\x80\\xC0\\xAF\\xED\\xA0\\x80\\xE2\\x80");
	/* cut at a character, "..." after */
	CHECK_STR(gp_term_escape(b, 10, "abcdef\x1bgh"), "abcdef...");
	CHECK_STR(gp_term_escape(b, 12, "abc\xe4\xb8\xad\xe4\xb8\xadxyz"), "abc\xe4\xb8\xad...");
	CHECK_STR(gp_term_escape(b, sizeof(b), NULL), "");
	d = gp_term_escape_dup("\x1b\x1b\x1b");
	CHECK_STR(d, "\\x1B\\x1B\\x1B");
	free(d);
	/* a table's cells go through it, widths from what is printed */
	{
		struct gp_table t;
		int rc;

		gp_table_init(&t, 2, "ll");
		gp_table_row(&t, "\x1b[31mred", "x");
		gp_table_row(&t, "abcdefghijklm", "y");
		d = printed(&t, GP_TABLE_TEXT, NULL, &rc);
		CHECK_STR(d, "\\x1B[31mred    x\nabcdefghijklm  y\n");
		free(d);
		gp_table_free(&t);
	}
}

int main(void)
{
	term();
	text();
	long_cell();
	markdown();
	cells();
	wide();
	return CHECK_DONE();
}
