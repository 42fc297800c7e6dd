/* viewer/analyze/model/mapped.c: the pages expandable segments mapped, as
 * ranges: maps next to each other merge, an unmap cuts one range in two,
 * trims ends, takes several whole, and passes over what was not mapped;
 * against a page-by-page model over many random maps and unmaps. */
#include <stdlib.h>

#include "check.h"
#include "mapped.h"

#define PAGES 512
#define PAGE 0x200000ull /* 2 MiB, as PyTorch maps them */
#define BASE 0x7f0000000000ull

/* The ranges are sorted, apart, and hold exactly the pages model marks. */
static int same(const struct an_mapped *m, const unsigned char *model)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (!m->v[i].bytes || (i && m->v[i - 1].addr + m->v[i - 1].bytes >= m->v[i].addr))
			return 0;
	}
	for (unsigned p = 0; p < PAGES; p++) {
		uint64_t a = BASE + p * PAGE;
		int in = k < m->n && a >= m->v[k].addr && a < m->v[k].addr + m->v[k].bytes;

		if (in != model[p])
			return 0;
		if (k < m->n && a + PAGE == m->v[k].addr + m->v[k].bytes)
			k++;
	}
	return k == m->n;
}

int main(void)
{
	struct an_mapped m = { 0 };
	unsigned char model[PAGES] = { 0 };

	/* three maps end to end: one range */
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(an_mapped_add(&m, BASE + i * 10 * PAGE, 10 * PAGE), 0);
	CHECK_EQ_INT(m.n, 1);
	CHECK_EQ_U64(m.v[0].bytes, 30 * PAGE);
	/* a hole cut in the middle: two */
	CHECK_EQ_INT(an_mapped_remove(&m, BASE + 12 * PAGE, 5 * PAGE), 0);
	CHECK_EQ_INT(m.n, 2);
	CHECK_EQ_U64(m.v[0].bytes, 12 * PAGE);
	CHECK_EQ_U64(m.v[1].addr, BASE + 17 * PAGE);
	/* the hole mapped again with more on both sides: one again */
	CHECK_EQ_INT(an_mapped_add(&m, BASE + 11 * PAGE, 8 * PAGE), 0);
	CHECK_EQ_INT(m.n, 1);
	/* an unmap over all of it and pages never mapped: none */
	CHECK_EQ_INT(an_mapped_remove(&m, BASE - PAGE, 40 * PAGE), 0);
	CHECK_EQ_INT(m.n, 0);
	CHECK_EQ_INT(an_mapped_add(&m, BASE, 0), 0);
	CHECK_EQ_INT(m.n, 0);

	srand(7);
	for (int round = 0; round < 20000; round++) {
		unsigned p = (unsigned)rand() % PAGES, n = 1 + (unsigned)rand() % 24;
		int map = rand() % 3 != 0;

		if (p + n > PAGES)
			n = PAGES - p;
		CHECK_EQ_INT(map ? an_mapped_add(&m, BASE + p * PAGE, n * PAGE)
				 : an_mapped_remove(&m, BASE + p * PAGE, n * PAGE), 0);
		for (unsigned k = p; k < p + n; k++)
			model[k] = (unsigned char)map;
		if (!same(&m, model)) {
			CHECK(!"the ranges are the pages mapped");
			break;
		}
	}
	an_mapped_free(&m);
	CHECK_EQ_INT(m.n, 0);
	return CHECK_DONE();
}
