/* The writer thread's set and string map (see writer_ctx.h), on the
 * project's u64 map (exporters/u64_map.h). */
#include "writer_ctx.h"

#include <errno.h>
#include <stdlib.h>

/* ---- set of u64: a u64map whose values only say "present" ---- */

static char present; /* any non-NULL value would do */

int gp_u64set_add(struct gp_u64set *s, uint64_t key)
{
	if (gp_u64map_get(&s->map, key))
		return 0;
	return gp_u64map_put(&s->map, key, &present) == 0 ? 1 : -ENOMEM;
}

void gp_u64set_free(struct gp_u64set *s)
{
	gp_u64map_free(&s->map);
}

/* ---- u64 -> owned string: a u64map whose values are the strings ---- */

const char *gp_strmap_get(const struct gp_strmap *m, uint64_t key)
{
	return gp_u64map_get(&m->map, key);
}

int gp_strmap_put(struct gp_strmap *m, uint64_t key, char *val)
{
	char *old = gp_u64map_get(&m->map, key);

	if (gp_u64map_put(&m->map, key, val) != 0) {
		free(val);
		return -ENOMEM;
	}
	free(old);
	return 0;
}

void gp_strmap_del(struct gp_strmap *m, uint64_t key)
{
	free(gp_u64map_del(&m->map, key));
}

void gp_strmap_free(struct gp_strmap *m)
{
	for (size_t i = 0; i < m->map.cap; i++)
		free(m->map.slots[i].val);
	gp_u64map_free(&m->map);
}
