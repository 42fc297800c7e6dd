/* u64 -> pointer hash map, see map.h. */
#include "map.h"

#include <errno.h>
#include <stdlib.h>

static int resize(struct an_map *m, size_t cap)
{
	struct an_map_slot *slots = calloc(cap, sizeof(*slots));
	size_t mask = cap - 1;

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->slots[i].val)
			continue;
		for (j = an_map_hash(m->slots[i].key, mask); slots[j].val; j = (j + 1) & mask)
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int an_map_put(struct an_map *m, uint64_t key, void *val)
{
	size_t mask, i;

	if ((m->count + 1) * 2 > m->cap) {
		int err = resize(m, m->cap ? m->cap * 2 : 16);

		if (err)
			return err;
	}
	mask = m->cap - 1;
	for (i = an_map_hash(key, mask); m->slots[i].val; i = (i + 1) & mask) {
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return 0;
		}
	}
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->count++;
	return 0;
}

void *an_map_del(struct an_map *m, uint64_t key)
{
	size_t mask, i, j;
	void *val;

	if (!m->count)
		return NULL;
	mask = m->cap - 1;
	for (i = an_map_hash(key, mask); m->slots[i].val; i = (i + 1) & mask)
		if (m->slots[i].key == key)
			break;
	if (!m->slots[i].val)
		return NULL;
	val = m->slots[i].val;
	for (j = (i + 1) & mask; m->slots[j].val; j = (j + 1) & mask) {
		size_t home = an_map_hash(m->slots[j].key, mask);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].val = NULL;
	m->count--;
	return val;
}

void an_map_free(struct an_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}
