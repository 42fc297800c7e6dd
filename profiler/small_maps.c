/* The writer thread's small maps (see writer_ctx.h). Open addressing with
 * linear probing; 0 is the empty key, so callers never store key 0. */
#include "writer_ctx.h"

#include <errno.h>
#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 31;
	key *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(key >> 17) & (cap - 1);
}

/* ---- set of u64: a u64map whose values are unused ---- */

int gp_u64set_add(struct gp_u64set *s, uint64_t key)
{
	int found;
	gp_u64map_get(&s->map, key, &found);
	if (found)
		return 0;
	return gp_u64map_put(&s->map, key, 1) == 0 ? 1 : -ENOMEM;
}

void gp_u64set_free(struct gp_u64set *s)
{
	gp_u64map_free(&s->map);
}

/* ---- u64 -> owned string: a u64map whose values are char pointers ---- */

const char *gp_strmap_get(const struct gp_strmap *m, uint64_t key)
{
	int found;
	return (const char *)(uintptr_t)gp_u64map_get(&m->map, key, &found);
}

int gp_strmap_put(struct gp_strmap *m, uint64_t key, char *val)
{
	int found;
	char *old = (char *)(uintptr_t)gp_u64map_get(&m->map, key, &found);
	if (gp_u64map_put(&m->map, key, (uint64_t)(uintptr_t)val) != 0) {
		free(val);
		return -ENOMEM;
	}
	free(old);
	return 0;
}

void gp_strmap_del(struct gp_strmap *m, uint64_t key)
{
	int found;
	free((char *)(uintptr_t)gp_u64map_take(&m->map, key, &found));
}

void gp_strmap_free(struct gp_strmap *m)
{
	for (size_t i = 0; i < m->map.cap; i++)
		if (m->map.keys[i])
			free((char *)(uintptr_t)m->map.vals[i]);
	gp_u64map_free(&m->map);
}

/* ---- u64 -> u64 ---- */

static size_t find_u64(const struct gp_u64map *m, uint64_t key, int *found)
{
	size_t j = slot_of(key, m->cap);
	while (m->keys[j]) {
		if (m->keys[j] == key) {
			*found = 1;
			return j;
		}
		j = (j + 1) & (m->cap - 1);
	}
	*found = 0;
	return j;
}

int gp_u64map_put(struct gp_u64map *m, uint64_t key, uint64_t val)
{
	int found;
	if ((m->len + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		uint64_t *nv = calloc(ncap, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			size_t j = slot_of(m->keys[i], ncap);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = m->keys[i];
			nv[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
	}
	size_t j = find_u64(m, key, &found);
	if (!found) {
		m->keys[j] = key;
		m->len++;
	}
	m->vals[j] = val;
	return 0;
}

uint64_t gp_u64map_get(const struct gp_u64map *m, uint64_t key, int *found)
{
	*found = 0;
	if (!m->cap)
		return 0;
	size_t j = find_u64(m, key, found);
	return *found ? m->vals[j] : 0;
}

uint64_t gp_u64map_take(struct gp_u64map *m, uint64_t key, int *found)
{
	*found = 0;
	if (!m->cap)
		return 0;
	size_t i = find_u64(m, key, found);
	if (!*found)
		return 0;
	uint64_t val = m->vals[i];
	m->keys[i] = 0;
	m->len--;
	/* backward shift: no tombstones accumulate */
	for (size_t j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		size_t home = slot_of(m->keys[j], m->cap);
		int move = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
		if (move) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
	return val;
}

void gp_u64map_free(struct gp_u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->len = 0;
}
