/* The pages PyTorch's expandable segments have mapped, as address ranges
 * (mapped.h). PyTorch maps pages at a segment's end in
 * pieces and unmaps a stretch that may cover several of them or part of
 * one, so the ranges are kept merged and cut as the events say. A device
 * holds a few runs (one an expandable segment): a sorted array. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapped.h"

/* Room for n ranges; 0 or -ENOMEM. */
static int reserve(struct an_mapped *m, size_t n)
{
	struct an_seg *v;
	size_t cap;

	if (n <= m->cap)
		return 0;
	cap = m->cap ? m->cap * 2 : 8;
	if (cap < n)
		cap = n;
	v = realloc(m->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->v = v;
	m->cap = cap;
	return 0;
}

int an_mapped_add(struct an_mapped *m, uint64_t addr, uint64_t bytes)
{
	uint64_t end = addr + bytes;
	size_t i = 0, j;

	if (!bytes || end < addr)
		return 0;
	/* the ranges it touches or overlaps: [i, j), merged into one */
	while (i < m->n && m->v[i].addr + m->v[i].bytes < addr)
		i++;
	for (j = i; j < m->n && m->v[j].addr <= end; j++) {
		if (m->v[j].addr < addr)
			addr = m->v[j].addr;
		if (m->v[j].addr + m->v[j].bytes > end)
			end = m->v[j].addr + m->v[j].bytes;
	}
	if (j == i) {
		if (reserve(m, m->n + 1))
			return -ENOMEM;
		memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(m->v[0]));
		m->n++;
	} else {
		memmove(&m->v[i + 1], &m->v[j], (m->n - j) * sizeof(m->v[0]));
		m->n -= j - i - 1;
	}
	m->v[i] = (struct an_seg){ addr, end - addr };
	return 0;
}

int an_mapped_remove(struct an_mapped *m, uint64_t addr, uint64_t bytes)
{
	uint64_t end = addr + bytes;

	if (!bytes || end < addr)
		return 0;
	for (size_t i = 0; i < m->n;) {
		uint64_t a = m->v[i].addr, e = a + m->v[i].bytes;

		if (e <= addr || a >= end) {
			i++;
			continue;
		}
		if (a < addr && e > end) { /* cut in two */
			if (reserve(m, m->n + 1))
				return -ENOMEM;
			memmove(&m->v[i + 2], &m->v[i + 1], (m->n - i - 1) * sizeof(m->v[0]));
			m->n++;
			m->v[i] = (struct an_seg){ a, addr - a };
			m->v[i + 1] = (struct an_seg){ end, e - end };
			return 0;
		}
		if (a >= addr && e <= end) { /* all of it */
			memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(m->v[0]));
			m->n--;
			continue;
		}
		if (a < addr)
			m->v[i].bytes = addr - a;
		else
			m->v[i] = (struct an_seg){ end, e - end };
		i++;
	}
	return 0;
}

void an_mapped_free(struct an_mapped *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}
