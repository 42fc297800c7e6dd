/* The writer thread's address -> size map (sizes of live stream-ordered
 * allocations): every key put is found with its latest value until taken,
 * through growth and through deletions that shift colliding keys back; and
 * the string map and the set built on it. */
#include "writer_ctx.h"

#include "../unit/check.h"

#include <stdlib.h>

/* writer_ctx.h declares the recorder's globals; this test needs none. */
struct gp_rec_globals gp_rec;

#define N 5000
/* distinct, nonzero, scattered: an odd multiplier is a bijection mod 2^64 */
#define KEY(i) (((uint64_t)(i) + 1) * 0xD6E8FEB86659FD93ULL)

int main(void)
{
	struct gp_u64map m = { 0 };
	static uint64_t model[N]; /* value of key i+1, 0 when absent */
	int found;

	CHECK(gp_u64map_take(&m, 42, &found) == 0 && !found); /* empty, never grown */
	/* scattered addresses, so that keys collide and deletions must shift
	 * (an allocator's dense multiples of 512 spread without one collision) */
	for (uint64_t i = 0; i < N; i++) {
		CHECK(gp_u64map_put(&m, KEY(i), i * 3 + 1) == 0);
		model[i] = i * 3 + 1;
	}
	CHECK(m.len == N);
	CHECK(gp_u64map_put(&m, KEY(0), 99) == 0); /* a put again replaces */
	model[0] = 99;
	CHECK(m.len == N);
	/* take every third, then check all: a backward shift must not lose a key */
	for (uint64_t i = 0; i < N; i += 3) {
		CHECK(gp_u64map_take(&m, KEY(i), &found) == model[i] && found);
		model[i] = 0;
	}
	for (uint64_t i = 0; i < N; i++) {
		uint64_t v = gp_u64map_take(&m, KEY(i), &found);
		CHECK(found == (model[i] != 0));
		CHECK(v == model[i]);
	}
	CHECK(m.len == 0);
	CHECK(gp_u64map_take(&m, KEY(0), &found) == 0 && !found);
	gp_u64map_free(&m);

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
	gp_strmap_del(&sm, KEY(5));
	CHECK(gp_strmap_get(&sm, KEY(5)) == NULL && sm.map.len == 299);
	gp_strmap_free(&sm);

	/* the set on top of it: 1 when added, 0 when already there */
	struct gp_u64set set = { 0 };
	for (uint64_t i = 0; i < 300; i++)
		CHECK(gp_u64set_add(&set, KEY(i)) == 1);
	for (uint64_t i = 0; i < 300; i++)
		CHECK(gp_u64set_add(&set, KEY(i)) == 0);
	CHECK(set.map.len == 300);
	gp_u64set_free(&set);
	return CHECK_DONE();
}
