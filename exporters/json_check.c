/* JSON object validation for untrusted trace lines (see json_check.h).
 *
 * Recovery copies lines from a possibly corrupt stream into a file viewers
 * will parse; a line that merely looks like an event ("{...},") may hold
 * garbage decoded from damaged deflate data, so each one is checked against
 * the full grammar. Recursion is bounded by GP_JSON_MAX_DEPTH. */
#include "json_check.h"

#include <string.h>

#include "utf8.h"

struct cur {
	const unsigned char *p;
	const unsigned char *end;
};

static int value(struct cur *c, int depth);

static void ws(struct cur *c)
{
	while (c->p < c->end &&
	       (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int is_hex(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static int is_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

static int string(struct cur *c)
{
	c->p++; /* opening quote, checked by the caller */
	while (c->p < c->end) {
		unsigned char ch = *c->p;

		if (ch == '"') {
			c->p++;
			return 1;
		}
		if (ch < 0x20)
			return 0;
		if (ch == '\\') {
			if (c->end - c->p < 2)
				return 0;
			ch = c->p[1];
			if (ch == 'u') {
				if (c->end - c->p < 6 || !is_hex(c->p[2]) || !is_hex(c->p[3]) ||
				    !is_hex(c->p[4]) || !is_hex(c->p[5]))
					return 0;
				c->p += 6;
			} else if (ch && strchr("\"\\/bfnrt", ch)) {
				c->p += 2;
			} else {
				return 0;
			}
		} else if (ch >= 0x80) {
			int k = gp_utf8_seq(c->p, (size_t)(c->end - c->p));

			if (k < 0)
				return 0;
			c->p += k;
		} else {
			c->p++;
		}
	}
	return 0;
}

static int digits(struct cur *c)
{
	const unsigned char *start = c->p;

	while (c->p < c->end && is_digit(*c->p))
		c->p++;
	return c->p > start;
}

static int number(struct cur *c)
{
	if (*c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (!digits(c))
		return 0;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!digits(c))
			return 0;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!digits(c))
			return 0;
	}
	return 1;
}

static int literal(struct cur *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return 0;
	c->p += n;
	return 1;
}

/* Members of an object or elements of an array, after the opening bracket. */
static int container(struct cur *c, int depth, unsigned char close)
{
	c->p++;
	ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return 1;
	}
	for (;;) {
		if (close == '}') {
			if (c->p >= c->end || *c->p != '"' || !string(c))
				return 0;
			ws(c);
			if (c->p >= c->end || *c->p != ':')
				return 0;
			c->p++;
		}
		if (!value(c, depth + 1))
			return 0;
		ws(c);
		if (c->p >= c->end)
			return 0;
		if (*c->p == close) {
			c->p++;
			return 1;
		}
		if (*c->p != ',')
			return 0;
		c->p++;
		ws(c);
	}
}

static int value(struct cur *c, int depth)
{
	ws(c);
	if (c->p >= c->end)
		return 0;
	switch (*c->p) {
	case '{':
	case '[':
		if (depth >= GP_JSON_MAX_DEPTH)
			return 0;
		return container(c, depth, *c->p == '{' ? '}' : ']');
	case '"':
		return string(c);
	case 't':
		return literal(c, "true");
	case 'f':
		return literal(c, "false");
	case 'n':
		return literal(c, "null");
	default:
		if (*c->p == '-' || is_digit(*c->p))
			return number(c);
		return 0;
	}
}

int gp_json_is_object(const char *p, size_t n)
{
	struct cur c = { (const unsigned char *)p, (const unsigned char *)p + n };

	ws(&c);
	if (c.p >= c.end || *c.p != '{' || !value(&c, 0))
		return 0;
	ws(&c);
	return c.p == c.end;
}

int gp_json_top_member(const char *p, size_t n, const char *key,
		       const char **v, size_t *vn)
{
	struct cur c = { (const unsigned char *)p, (const unsigned char *)p + n };
	size_t klen = strlen(key);

	/* The object is known valid, so skipping with the validator's own
	 * routines cannot fail or run past the end. */
	ws(&c);
	if (c.p >= c.end || *c.p != '{')
		return 0;
	c.p++;
	for (;;) {
		const unsigned char *k, *vs;
		size_t kn;

		ws(&c);
		if (c.p >= c.end || *c.p != '"')
			return 0;
		k = c.p + 1;
		if (!string(&c))
			return 0;
		kn = (size_t)(c.p - 1 - k);
		ws(&c);
		if (c.p >= c.end || *c.p != ':')
			return 0;
		c.p++;
		ws(&c);
		vs = c.p;
		if (!value(&c, 1))
			return 0;
		if (kn == klen && memcmp(k, key, klen) == 0) {
			*v = (const char *)vs;
			*vn = (size_t)(c.p - vs);
			return 1;
		}
		ws(&c);
		if (c.p >= c.end || *c.p != ',')
			return 0;
		c.p++;
	}
}
