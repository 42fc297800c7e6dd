/* The writer thread's string map and set (profiler/small_maps.c), on the
 * u64 map (exporters/u64_map.h, tested by tests/unit/test_u64_map.c): owned
 * strings replaced and freed, a set's "added" and "already there"; key 0
 * included. */
#include "writer_ctx.h"

#include "../unit/check.h"

#include <stdlib.h>

/* writer_ctx.h declares the recorder's globals; this test needs none. */
struct gp_rec_globals gp_rec;

/* distinct, scattered; KEY(0) is 0 */
#define KEY(i) ((uint64_t)(i) * 0xD6E8FEB86659FD93ULL)

int main(void)
{
	/* the string map on top of it: owned values replaced and freed */
	struct gp_strmap sm = { 0 };
	CHECK(gp_strmap_get(&sm, 7) == NULL);
	for (uint64_t i = 0; i < 300; i++) {
		char *v = malloc(24);
		snprintf(v, 24, "v%llu", (unsigned long long)i);
		CHECK(gp_strmap_put(&sm, KEY(i), v) == 0);
	}
	char *again = malloc(8);
	snprintf(again, 8, "again");
	CHECK(gp_strmap_put(&sm, KEY(5), again) == 0);
	CHECK(strcmp(gp_strmap_get(&sm, KEY(5)), "again") == 0);
	CHECK(strcmp(gp_strmap_get(&sm, KEY(299)), "v299") == 0);
	CHECK(strcmp(gp_strmap_get(&sm, 0), "v0") == 0);
	gp_strmap_del(&sm, KEY(5));
	CHECK(gp_strmap_get(&sm, KEY(5)) == NULL && sm.map.count == 299);
	gp_strmap_free(&sm);

	/* the set on top of it: 1 when added, 0 when already there */
	struct gp_u64set set = { 0 };
	for (uint64_t i = 0; i < 300; i++)
		CHECK(gp_u64set_add(&set, KEY(i)) == 1);
	for (uint64_t i = 0; i < 300; i++)
		CHECK(gp_u64set_add(&set, KEY(i)) == 0);
	CHECK(set.map.count == 300);
	gp_u64set_free(&set);
	return CHECK_DONE();
}
