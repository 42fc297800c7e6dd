/* JSON object validation for untrusted trace lines (see json_check.h).
 *
 * Recovery copies lines from a possibly corrupt stream into a file viewers
 * will parse; a line that merely looks like an event ("{...},") may hold
 * garbage decoded from damaged deflate data, so each one is checked against
 * the full grammar, with json_scan.h's scanner: any nesting up to
 * GP_JSON_MAX_DEPTH, numbers of any length. */
#include "json_check.h"

#include <stdint.h>
#include <string.h>

#include "json_scan.h"

static struct gp_json_cur cursor(const char *p, size_t n)
{
	struct gp_json_cur c = { (const unsigned char *)p, (const unsigned char *)p + n, NULL,
				 GP_JSON_MAX_DEPTH, SIZE_MAX };

	return c;
}

int gp_json_is_object(const char *p, size_t n)
{
	struct gp_json_cur c = cursor(p, n);
	struct gp_json_val v;

	gp_json_ws(&c);
	if (c.p >= c.end || *c.p != '{' || gp_json_value(&c, 0, &v))
		return 0;
	gp_json_ws(&c);
	return c.p == c.end;
}

int gp_json_top_member(const char *p, size_t n, const char *key,
		       const char **v, size_t *vn)
{
	struct gp_json_cur c = cursor(p, n);
	size_t klen = strlen(key);

	/* The object is known valid, so skipping with the scanner cannot fail
	 * or run past the end. */
	gp_json_ws(&c);
	if (c.p >= c.end || *c.p != '{')
		return 0;
	c.p++;
	for (;;) {
		struct gp_json_val k, val;
		const unsigned char *vs;

		gp_json_ws(&c);
		if (gp_json_member_name(&c, &k))
			return 0;
		vs = c.p;
		if (gp_json_value(&c, 1, &val))
			return 0;
		if (k.n == klen && memcmp(k.p, key, klen) == 0) {
			*v = (const char *)vs;
			*vn = (size_t)(c.p - vs);
			return 1;
		}
		gp_json_ws(&c);
		if (c.p >= c.end || *c.p != ',')
			return 0;
		c.p++;
	}
}
