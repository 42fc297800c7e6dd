/* One trace line -> raw values of the members that matter, see parse.h.
 * A hand-written scanner rather than json-c: this is the hot loop of the
 * whole analysis (bench/RESULTS.md has both measured). */
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/utf8.h"

struct cur {
	const unsigned char *p;
	const unsigned char *end;
	const char *why;
};

/* 1 for bytes that end the fast path inside a string */
#define R16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
static const unsigned char str_stop[256] = {
	R16(1), R16(1),                                 /* control characters */
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* '"' */
	R16(0), R16(0),
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* '\\' */
	R16(0), R16(0),
	R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), /* UTF-8 */
};

static int fail(struct cur *c, const char *why)
{
	c->why = why;
	return -EINVAL;
}

static inline void ws(struct cur *c)
{
	if (c->p < c->end && *c->p > ' ')
		return;
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

static int is_hex(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
}

/* Nonzero when one of the 8 bytes of x ends the fast path of a string: '"',
 * '\\', a control character or a non-ASCII byte (exact, no false hits). */
static inline uint64_t stop8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
	uint64_t lo7 = x & ~high;

	/* a byte is zero iff (v - 1) & ~v has its top bit, done on 7 bits to
	 * keep carries inside each byte */
	q = ((q & ~high) + ~high) | q;
	b = ((b & ~high) + ~high) | b;
	return (~q | ~b | ~(lo7 + (ones * (0x80 - 0x20))) | x) & high;
}

/* c->p at the opening quote. Inlined: most strings are a few bytes and
 * the call would cost more than the scan. */
static inline __attribute__((always_inline)) int scan_string(struct cur *c, struct an_jv *v)
{
	const unsigned char *p = c->p + 1, *end = c->end;

	v->type = JT_STR;
	v->esc = 0;
	v->p = (const char *)p;
	for (;;) {
		while (p + 8 <= end) {
			uint64_t x, m;

			memcpy(&x, p, 8);
			m = stop8(x);
			if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				p += __builtin_ctzll(m) >> 3; /* the first stop byte */
#endif
				break;
			}
			p += 8;
		}
		while (p < end && !str_stop[*p])
			p++;
		if (p >= end)
			return fail(c, "unterminated string");
		if (*p == '"')
			break;
		if (*p < 0x20)
			return fail(c, "control character in a string");
		if (*p == '\\') {
			v->esc = 1;
			if (end - p < 2)
				return fail(c, "unterminated string");
			if (p[1] == 'u') {
				if (end - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) ||
				    !is_hex(p[5]))
					return fail(c, "bad \\u escape");
				p += 6;
			} else if (p[1] && strchr("\"\\/bfnrt", p[1])) {
				p += 2;
			} else {
				return fail(c, "bad escape in a string");
			}
			continue;
		}
		{
			int k = gp_utf8_seq(p, (size_t)(end - p));

			if (k < 0)
				return fail(c, "invalid UTF-8 in a string");
			p += k;
		}
	}
	if ((size_t)(p - (const unsigned char *)v->p) > UINT32_MAX)
		return fail(c, "string too long");
	v->n = (uint32_t)(p - (const unsigned char *)v->p);
	c->p = p + 1;
	return 0;
}

static inline __attribute__((always_inline)) int scan_number(struct cur *c, struct an_jv *v)
{
	const unsigned char *p = c->p, *end = c->end;

	v->type = JT_NUM;
	v->num = 0;
	v->p = (const char *)p;
	if (*p == '-') {
		v->num |= NUM_NEG;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return fail(c, "bad number");
	if (*p == '0') {
		p++;
	} else {
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && *p == '.') {
		v->num |= NUM_FRAC;
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return fail(c, "bad number");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		v->num |= NUM_EXP;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return fail(c, "bad number");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if ((size_t)(p - c->p) > 4096)
		return fail(c, "number too long");
	v->n = (uint32_t)(p - c->p);
	c->p = p;
	return 0;
}

static int literal(struct cur *c, const char *lit, size_t n)
{
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return fail(c, "bad literal");
	c->p += n;
	return 0;
}

static int skip_value(struct cur *c, int depth, struct an_jv *v);

/* c->p at an object member: its name into *name, then past the ':'. */
static int scan_member_name(struct cur *c, struct an_jv *name)
{
	if (c->p >= c->end || *c->p != '"')
		return fail(c, "expected a member name");
	if (scan_string(c, name))
		return -EINVAL;
	ws(c);
	if (c->p >= c->end || *c->p != ':')
		return fail(c, "expected ':'");
	c->p++;
	ws(c);
	return 0;
}

/* c->p at '{' or '['; depth counts the container being entered. Not
 * inlined: it recurses, and is rare. */
static __attribute__((noinline)) int skip_container(struct cur *c, int depth)
{
	unsigned char close = *c->p == '{' ? '}' : ']';
	int obj = close == '}';
	struct an_jv tmp;

	if (depth > AN_MAX_DEPTH)
		return fail(c, "nested too deeply");
	c->p++;
	ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return 0;
	}
	for (;;) {
		if (obj && scan_member_name(c, &tmp))
			return -EINVAL;
		if (skip_value(c, depth, &tmp))
			return -EINVAL;
		ws(c);
		if (c->p >= c->end)
			return fail(c, "unterminated object or array");
		if (*c->p == ',') {
			c->p++;
			ws(c);
			continue;
		}
		if (*c->p == close) {
			c->p++;
			return 0;
		}
		return fail(c, "expected ',' or the end of an object or array");
	}
}

/* Any value; depth is that of the enclosing container. Inlined into the
 * member loops: scalars are most values and cost less than the call. */
static inline __attribute__((always_inline)) int value(struct cur *c, int depth, struct an_jv *v)
{
	if (c->p >= c->end)
		return fail(c, "missing value");
	switch (*c->p) {
	case '"':
		return scan_string(c, v);
	case '{':
		v->type = JT_OBJ;
		return skip_container(c, depth + 1);
	case '[':
		v->type = JT_ARR;
		return skip_container(c, depth + 1);
	case 't':
		v->type = JT_TRUE;
		return literal(c, "true", 4);
	case 'f':
		v->type = JT_FALSE;
		return literal(c, "false", 5);
	case 'n':
		v->type = JT_NULL;
		return literal(c, "null", 4);
	default:
		if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))
			return scan_number(c, v);
		return fail(c, "bad value");
	}
}

static int skip_value(struct cur *c, int depth, struct an_jv *v)
{
	return value(c, depth, v);
}

struct keydef {
	const char *name;
	unsigned char len;
	unsigned char key;
};

/* Made from exporters/trace_format.def (parse.h's enums). */
#define GP_FORMAT(version, meaning)
#define GP_CAT(id, name, meaning)
#define GP_EVENT(id, name, ph, scope, cat, meaning)
#define GP_ARG(event, field, type, unit, when, meaning)
#define GP_FIELD(id, key, read)
#define GP_TOP(id, key, read, type, unit, meaning) \
	GP_FMT_IF_##read({ key, sizeof(key) - 1, TK_##id }, )
static const struct keydef top_keys[] = {
#include "exporters/trace_format.def"
};
#undef GP_TOP
#define GP_TOP(id, key, read, type, unit, meaning)
#undef GP_FIELD
#define GP_FIELD(id, key, read) GP_FMT_IF_##read({ key, sizeof(key) - 1, AK_##id }, )
static const struct keydef arg_keys[] = {
#include "exporters/trace_format.def"
};
#undef GP_FORMAT
#undef GP_CAT
#undef GP_EVENT
#undef GP_TOP
#undef GP_FIELD
#undef GP_ARG

/* Keys are found by length and first byte (at most a few candidates),
 * then compared a word at a time. */
#define LK_LEN 24
#define LK_WAYS 3
struct keyindex {
	signed char slot[LK_LEN][26][LK_WAYS]; /* index into the table + 1; 0: none */
	uint64_t word[64][3];                  /* each key, zero padded */
};
static struct keyindex top_index, arg_index;
static int index_ready;

static void key_words(const char *p, uint32_t n, const char *end, uint64_t w[3]);

static void index_build(struct keyindex *ix, const struct keydef *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		signed char *s = ix->slot[t[i].len][t[i].name[0] - 'a'];
		int w = 0;

		while (s[w])
			w++; /* LK_WAYS is enough for the tables below */
		s[w] = (signed char)(i + 1);
		key_words(t[i].name, t[i].len, t[i].name + t[i].len, ix->word[i]);
	}
}

/* n (1 to 8) bytes at p as a number, the first byte lowest. One load when
 * 8 bytes can be read: memcpy of a variable size would go through the
 * stack and stall the load that follows (store forwarding). */
static inline uint64_t load_n(const char *p, uint32_t n, const char *end)
{
	uint64_t x = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (end - p >= 8) {
		memcpy(&x, p, 8);
		return n >= 8 ? x : x & ((1ull << (8 * n)) - 1);
	}
#endif
	(void)end;
	for (uint32_t i = 0; i < n && i < 8; i++)
		x |= (uint64_t)(unsigned char)p[i] << (8 * i);
	return x;
}

static void key_words(const char *p, uint32_t n, const char *end, uint64_t w[3])
{
	w[0] = load_n(p, n, end);
	w[1] = n > 8 ? load_n(p + 8, n - 8, end) : 0;
	w[2] = n > 16 ? load_n(p + 16, n - 16, end) : 0;
}

static int lookup(const struct keyindex *ix, const struct keydef *t, const struct an_jv *k,
		  const char *end)
{
	const signed char *s;
	unsigned first;
	uint64_t w[3];

	if (k->esc || k->n >= LK_LEN || k->n == 0)
		return -1;
	first = (unsigned char)k->p[0] - 'a';
	if (first >= 26)
		return -1;
	s = ix->slot[k->n][first];
	if (!s[0])
		return -1;
	key_words(k->p, k->n, end, w);
	for (int i = 0; i < LK_WAYS && s[i]; i++) {
		const uint64_t *d = ix->word[s[i] - 1];

		if (d[0] == w[0] && d[1] == w[1] && d[2] == w[2])
			return t[s[i] - 1].key;
	}
	return -1;
}

/* Events no analysis uses, known from ph and cat alone (they come first
 * in gpuprof's lines): counters, metadata, flows, and complete events other
 * than CUDA API calls (kernels, copies, sets). The rest of such a line is
 * still checked, without looking at its members. */
static int ignorable(const struct an_line *l)
{
	const struct an_jv *ph = &l->top[TK_PH], *cat = &l->top[TK_CAT];

	if (ph->type != JT_STR || ph->n != 1)
		return 0;
	switch (ph->p[0]) {
	case 'C':
	case 'M':
	case 's':
	case 'f':
		return 1;
	case 'X':
		return cat->type == JT_STR && !AN_JV_IS(cat, "cuda_runtime") &&
		       !AN_JV_IS(cat, "cuda_driver");
	default:
		return 0;
	}
}

/* c->p at '{' of an object whose members are recorded into vals via keys. */
static int scan_object(struct cur *c, int depth, const struct keyindex *ix,
		       const struct keydef *keys, struct an_jv *vals, struct an_line *line,
		       uint64_t *args_set)
{
	struct an_jv k, v;

	if (depth > AN_MAX_DEPTH)
		return fail(c, "nested too deeply");
	c->p++;
	ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return 0;
	}
	for (;;) {
		int which;

		if (scan_member_name(c, &k))
			return -EINVAL;
		which = line && line->ignored ? -1 : lookup(ix, keys, &k, (const char *)c->end);
		if (line && which == TK_ARGS && c->p < c->end && *c->p == '{') {
			if (scan_object(c, depth + 1, &arg_index, arg_keys, line->args, NULL,
					&line->args_set))
				return -EINVAL;
			vals[TK_ARGS].type = JT_OBJ;
			line->top_set |= 1u << TK_ARGS;
		} else {
			/* straight into its place: a copy through the stack stalls
			 * on store forwarding, a fifth of the parse */
			if (value(c, depth, which >= 0 ? &vals[which] : &v))
				return -EINVAL;
			if (which >= 0) {
				if (line)
					line->top_set |= 1u << which;
				else
					*args_set |= 1ull << which;
			}
			if (line && (which == TK_PH || which == TK_CAT))
				line->ignored = ignorable(line);
		}
		ws(c);
		if (c->p >= c->end)
			return fail(c, "unterminated object");
		if (*c->p == ',') {
			c->p++;
			ws(c);
			continue;
		}
		if (*c->p == '}') {
			c->p++;
			return 0;
		}
		return fail(c, "expected ',' or '}'");
	}
}

int an_parse_line(const char *p, size_t n, struct an_line *out, const char **why)
{
	struct cur c = { (const unsigned char *)p, (const unsigned char *)p + n, NULL };

	if (!index_ready) {
		index_build(&top_index, top_keys, sizeof(top_keys) / sizeof(top_keys[0]));
		index_build(&arg_index, arg_keys, sizeof(arg_keys) / sizeof(arg_keys[0]));
		index_ready = 1;
	}
	/* clear what the previous line set, not the whole struct */
	out->ignored = 0;
	while (out->top_set) {
		int i = __builtin_ctz(out->top_set);

		out->top[i].type = JT_NONE;
		out->top_set &= out->top_set - 1;
	}
	while (out->args_set) {
		int i = __builtin_ctzll(out->args_set);

		out->args[i].type = JT_NONE;
		out->args_set &= out->args_set - 1;
	}
	ws(&c);
	if (c.p >= c.end || *c.p != '{') {
		*why = "not a JSON object";
		return -EINVAL;
	}
	if (scan_object(&c, 1, &top_index, top_keys, out->top, out, NULL)) {
		*why = c.why;
		return -EINVAL;
	}
	ws(&c);
	if (c.p != c.end) {
		*why = "text after the object";
		return -EINVAL;
	}
	return 0;
}

int an_jv_u64(const struct an_jv *v, uint64_t *out)
{
	uint64_t x = 0;

	if (v->type != JT_NUM || v->num)
		return -EINVAL;
	for (uint32_t i = 0; i < v->n; i++) {
		unsigned d = (unsigned char)v->p[i] - '0';

		if (x > (UINT64_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

int an_jv_i64(const struct an_jv *v, int64_t *out)
{
	struct an_jv abs = *v;
	uint64_t x;

	if (v->type != JT_NUM || (v->num & (NUM_FRAC | NUM_EXP)))
		return -EINVAL;
	if (v->num & NUM_NEG) {
		abs.p++;
		abs.n--;
		abs.num = 0;
	}
	if (an_jv_u64(&abs, &x) || x > (uint64_t)INT64_MAX)
		return -EINVAL;
	*out = (v->num & NUM_NEG) ? -(int64_t)x : (int64_t)x;
	return 0;
}

#define MAX_US 1000000000000000ll /* 1e15 us, 31 years: ns fit in int64 */

int an_jv_us_to_ns(const struct an_jv *v, int64_t *out)
{
	const char *p = v->p, *end = v->p + v->n;
	int64_t us = 0, frac = 0;
	int neg = 0, digits = 0;

	if (v->type != JT_NUM)
		return -EINVAL;
	if (v->num & NUM_EXP) {
		char tmp[64];
		double d;

		if (v->n >= sizeof(tmp))
			return -EINVAL;
		memcpy(tmp, v->p, v->n);
		tmp[v->n] = '\0';
		d = strtod(tmp, NULL);
		if (!isfinite(d) || fabs(d) >= (double)MAX_US)
			return -EINVAL;
		*out = (int64_t)llround(d * 1000.0);
		return 0;
	}
	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (; p < end && *p != '.'; p++) {
		us = us * 10 + (*p - '0');
		if (us >= MAX_US)
			return -EINVAL;
	}
	if (p < end) {
		/* nanoseconds: three decimals, the rest (never written) dropped */
		for (p++; p < end && digits < 3; p++, digits++)
			frac = frac * 10 + (*p - '0');
		for (; digits < 3; digits++)
			frac *= 10;
	}
	*out = neg ? -(us * 1000 + frac) : us * 1000 + frac;
	return 0;
}

int an_jv_hex(const struct an_jv *v, uint64_t *out)
{
	uint64_t x = 0;

	if (v->type != JT_STR || v->esc || v->n < 3 || v->n > 18 || v->p[0] != '0' ||
	    (v->p[1] != 'x' && v->p[1] != 'X'))
		return -EINVAL;
	for (uint32_t i = 2; i < v->n; i++) {
		unsigned char ch = (unsigned char)v->p[i];

		if (!is_hex(ch))
			return -EINVAL;
		x = x * 16 + (ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
	}
	*out = x;
	return 0;
}

int an_jv_bool(const struct an_jv *v, int *out)
{
	if (v->type == JT_TRUE)
		*out = 1;
	else if (v->type == JT_FALSE)
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static unsigned hexval(char ch)
{
	unsigned char c = (unsigned char)ch;

	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

int an_jv_str(const struct an_jv *v, char *scratch, const char **s, size_t *n)
{
	const char *p = v->p, *end = v->p + v->n;
	char *o = scratch;

	if (v->type != JT_STR)
		return -EINVAL;
	if (!v->esc) {
		*s = v->p;
		*n = v->n;
		return 0;
	}
	/* Every escape is at least as long as what it decodes to (\uXXXX is
	 * 6 bytes for at most 3; a surrogate pair 12 for 4), so v->n bytes of
	 * scratch are enough. Syntax was checked by the scanner. */
	while (p < end) {
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		switch (p[1]) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			uint32_t cp = hexval(p[2]) << 12 | hexval(p[3]) << 8 | hexval(p[4]) << 4 |
				      hexval(p[5]);

			if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 12 && p[6] == '\\' &&
			    p[7] == 'u') {
				uint32_t lo = hexval(p[8]) << 12 | hexval(p[9]) << 8 |
					      hexval(p[10]) << 4 | hexval(p[11]);

				if (lo >= 0xDC00 && lo <= 0xDFFF) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					p += 6;
				}
			}
			if (cp >= 0xD800 && cp <= 0xDFFF)
				cp = 0xFFFD; /* lone surrogate */
			o += put_utf8(o, cp);
			p += 6;
			continue;
		}
		default: *o++ = p[1]; break; /* " \ / */
		}
		p += 2;
	}
	*s = scratch;
	*n = (size_t)(o - scratch);
	return 0;
}
