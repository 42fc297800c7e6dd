/* The u64 -> pointer hash map, see u64_map.h. */
#include "u64_map.h"

#include <errno.h>
#include <stdlib.h>

static int resize(struct gp_u64map *m, size_t cap)
{
	struct gp_u64map_slot *slots = calloc(cap, sizeof(*slots));
	size_t mask = cap - 1;

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->slots[i].val)
			continue;
		for (j = gp_u64map_hash(m->slots[i].key, mask); slots[j].val; j = (j + 1) & mask)
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int gp_u64map_put(struct gp_u64map *m, uint64_t key, void *val)
{
	size_t mask, i;

	if ((m->count + 1) * 2 > m->cap) {
		int err = resize(m, m->cap ? m->cap * 2 : 16);

		if (err)
			return err;
	}
	mask = m->cap - 1;
	for (i = gp_u64map_hash(key, mask); m->slots[i].val; i = (i + 1) & mask) {
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

void *gp_u64map_del(struct gp_u64map *m, uint64_t key)
{
	size_t mask, i, j;
	void *val;

	if (!m->count)
		return NULL;
	mask = m->cap - 1;
	for (i = gp_u64map_hash(key, mask); m->slots[i].val; i = (i + 1) & mask)
		if (m->slots[i].key == key)
			break;
	if (!m->slots[i].val)
		return NULL;
	val = m->slots[i].val;
	for (j = (i + 1) & mask; m->slots[j].val; j = (j + 1) & mask) {
		size_t home = gp_u64map_hash(m->slots[j].key, mask);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].val = NULL;
	m->count--;
	return val;
}

void gp_u64map_free(struct gp_u64map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}
