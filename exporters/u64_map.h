/* The one hash map of the project: 64-bit keys (addresses, correlation and
 * range ids, thread ids; any value, 0 included) to non-NULL pointers. Open
 * addressing, linear probing, backward-shift deletion (no tombstones), at
 * most half full; grows by doubling, from 16 slots.
 *
 * Used by the analyzer (viewer/analyze/) and by the recorder's writer thread
 * (profiler/small_maps.c). Not locked and it allocates as it grows: one
 * thread owns each map, and none is touched from a CUDA callback.
 * Start from a zeroed struct; gp_u64map_free() leaves it zeroed again.
 * Iterate over slots[0..cap) and skip those whose val is NULL. */
#ifndef GPUPROF_U64_MAP_H
#define GPUPROF_U64_MAP_H

#include <stddef.h>
#include <stdint.h>

struct gp_u64map_slot {
	uint64_t key;
	void *val; /* NULL: empty */
};

struct gp_u64map {
	struct gp_u64map_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t count;
};

static inline size_t gp_u64map_hash(uint64_t key, size_t mask)
{
	key ^= key >> 29;
	key *= 0x9E3779B97F4A7C15ull;
	return (size_t)(key >> 32) & mask;
}

/* The value of key, NULL when absent. Inline: the analyzer looks up every
 * event's address and correlation id. */
static inline void *gp_u64map_get(const struct gp_u64map *m, uint64_t key)
{
	size_t mask, i;

	if (!m->count)
		return NULL;
	mask = m->cap - 1;
	for (i = gp_u64map_hash(key, mask); m->slots[i].val; i = (i + 1) & mask)
		if (m->slots[i].key == key)
			return m->slots[i].val;
	return NULL;
}

/* Sets key to val (not NULL), replacing any value. 0 or -ENOMEM (the map is
 * then unchanged). */
int gp_u64map_put(struct gp_u64map *m, uint64_t key, void *val);
/* Removes key; returns its value, or NULL if absent. */
void *gp_u64map_del(struct gp_u64map *m, uint64_t key);
void gp_u64map_free(struct gp_u64map *m);

#endif
