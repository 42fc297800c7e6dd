/* A hash map from 64-bit keys (addresses, correlation ids, thread ids) to
 * non-NULL pointers: open addressing, linear probing, backward-shift
 * deletion, at most half full. */
#ifndef GPUPROF_AN_MAP_H
#define GPUPROF_AN_MAP_H

#include <stddef.h>
#include <stdint.h>

struct an_map_slot {
	uint64_t key;
	void *val; /* NULL: empty */
};

struct an_map {
	struct an_map_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t count;
};

static inline size_t an_map_hash(uint64_t key, size_t mask)
{
	key ^= key >> 29;
	key *= 0x9E3779B97F4A7C15ull;
	return (size_t)(key >> 32) & mask;
}

static inline void *an_map_get(const struct an_map *m, uint64_t key)
{
	size_t mask, i;

	if (!m->count)
		return NULL;
	mask = m->cap - 1;
	for (i = an_map_hash(key, mask); m->slots[i].val; i = (i + 1) & mask)
		if (m->slots[i].key == key)
			return m->slots[i].val;
	return NULL;
}

/* Sets key to val (not NULL), replacing any value. 0 or -ENOMEM. */
int an_map_put(struct an_map *m, uint64_t key, void *val);
/* Removes key; returns its value, or NULL if absent. */
void *an_map_del(struct an_map *m, uint64_t key);
void an_map_free(struct an_map *m);

#endif
