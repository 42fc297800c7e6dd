/* The reports' tables (viewer/render/table.h): columns aligned in
 * characters, no blanks at the end of a line, the heading set apart, long
 * cells whole; Markdown rows; cells escaped and cut. */
#include "check.h"
#include "viewer/render/table.h"

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
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_TEXT, "a\tb\x7f|<", 0, 0), "a?b?|<");
	CHECK_STR(gp_table_cell(b, sizeof(b), GP_TABLE_MD, "a\tb", 0, 0), "a b");
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

int main(void)
{
	text();
	long_cell();
	markdown();
	cells();
	wide();
	return CHECK_DONE();
}
