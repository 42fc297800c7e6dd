/* The u64 map (exporters/u64_map.h) against a model: every key put is found
 * with its latest value until deleted, through growth and through deletions
 * that shift colliding keys back; key 0 is a key like any other. */
#include "check.h"
#include "u64_map.h"

#include <stdlib.h>

#define N 5000
/* distinct and scattered (an odd multiplier is a bijection mod 2^64), so
 * that keys collide and deletions must shift; KEY(0) is 0 */
#define KEY(i) ((uint64_t)(i) * 0xD6E8FEB86659FD93ULL)

static int vals[N]; /* the value of KEY(i) is &vals[i] */

int main(void)
{
	struct gp_u64map m = { 0 };
	static int live[N];
	size_t seen = 0;

	CHECK(gp_u64map_get(&m, 42) == NULL); /* empty, never grown */
	CHECK(gp_u64map_del(&m, 42) == NULL);
	for (size_t i = 0; i < N; i++) {
		CHECK_EQ_INT(gp_u64map_put(&m, KEY(i), &vals[i]), 0);
		live[i] = 1;
	}
	CHECK_EQ_INT(m.count, N);
	CHECK(gp_u64map_get(&m, 0) == &vals[0]);
	CHECK_EQ_INT(gp_u64map_put(&m, KEY(1), &vals[2]), 0); /* a put again replaces */
	CHECK(gp_u64map_get(&m, KEY(1)) == &vals[2]);
	CHECK_EQ_INT(gp_u64map_put(&m, KEY(1), &vals[1]), 0);
	CHECK_EQ_INT(m.count, N);
	/* delete every third, then check all: a backward shift must not lose a key */
	for (size_t i = 0; i < N; i += 3) {
		CHECK(gp_u64map_del(&m, KEY(i)) == &vals[i]);
		live[i] = 0;
	}
	for (size_t i = 0; i < N; i++)
		CHECK(gp_u64map_get(&m, KEY(i)) == (live[i] ? &vals[i] : NULL));
	/* the slots hold exactly the live keys */
	for (size_t i = 0; i < m.cap; i++) {
		int *v = m.slots[i].val;

		if (!v)
			continue;
		seen++;
		CHECK(v >= vals && v < vals + N && live[v - vals] && m.slots[i].key == KEY(v - vals));
	}
	CHECK_EQ_INT(seen, m.count);
	for (size_t i = 0; i < N; i++) {
		CHECK(gp_u64map_del(&m, KEY(i)) == (live[i] ? &vals[i] : NULL));
		CHECK(gp_u64map_get(&m, KEY(i)) == NULL);
	}
	CHECK_EQ_INT(m.count, 0);
	gp_u64map_free(&m);
	CHECK(m.slots == NULL && m.cap == 0 && m.count == 0);
	return CHECK_DONE();
}
