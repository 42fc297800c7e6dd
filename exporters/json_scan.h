/* The one JSON scanner (RFC 8259), as static inline pieces over text in
 * memory: whitespace, strings (well-formed UTF-8, utf8.h), numbers,
 * literals, unsigned integers, and skipping a whole value. Internal.
 *
 * Its users keep their own strictness on top of it:
 *   exporters/json_check.c        any JSON object (recovery's line check)
 *   exporters/trace_scan.c        trace lines, the analyzer's hot loop: the
 *                                 members it reads, kept as raw values
 *   profiler/torch_counters.c     PyTorch's marks: integers only
 * and set the limits of their cursor (nesting, a number's length).
 *
 * Every scanner takes the cursor at the first byte of what it scans and
 * leaves it after it; none skips whitespace before or after (gp_json_ws
 * does). Each returns 0, or -EINVAL with c->why set to a short reason
 * (gpuprof analyze prints it). The string and value scanners are always
 * inlined: most values are a few bytes, and a call would cost more than the
 * scan (the analyzer's speed, bench/RESULTS.md). */
#ifndef GPUPROF_JSON_SCAN_H
#define GPUPROF_JSON_SCAN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct gp_json_cur {
	const unsigned char *p;
	const unsigned char *end;
	const char *why;   /* set on failure */
	int max_levels;    /* containers nested at most this deep (top = 1) */
	size_t max_number; /* a number's text at most this long */
};

/* What a value is; the numbers' flags. */
enum gp_json_type {
	GP_JSON_NONE = 0,
	GP_JSON_STR,
	GP_JSON_NUM,
	GP_JSON_TRUE,
	GP_JSON_FALSE,
	GP_JSON_NULL,
	GP_JSON_OBJ,
	GP_JSON_ARR
};
enum { GP_JSON_NEG = 1, GP_JSON_FRAC = 2, GP_JSON_EXP = 4 };

/* A raw value: for strings the bytes between the quotes, still escaped when
 * esc is set; for numbers the text, num its GP_JSON_* flags; for containers
 * their whole text, checked but not parsed. A number whose digits before
 * the point are at most 8 keeps the word its scan read them in (lead,
 * lead_n the digits): converting them then takes a few multiplications
 * instead of a step a digit (gp_json_lead_value). */
struct gp_json_val {
	const char *p;
	uint32_t n;
	uint8_t type;   /* enum gp_json_type */
	uint8_t esc;    /* string holds backslash escapes */
	uint8_t num;    /* GP_JSON_NEG | GP_JSON_FRAC | GP_JSON_EXP */
	uint8_t lead_n; /* numbers: the digits before the point held in lead, 0: none */
	uint64_t lead;  /* the 8 bytes from the first digit, the first the lowest */
};

#define GP_JSON_ALWAYS_INLINE inline __attribute__((always_inline))

static inline int gp_json_fail(struct gp_json_cur *c, const char *why)
{
	c->why = why;
	return -EINVAL;
}

static GP_JSON_ALWAYS_INLINE void gp_json_ws(struct gp_json_cur *c)
{
	if (c->p < c->end && *c->p > ' ')
		return;
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

static inline int gp_json_is_hex(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
}

static inline int gp_json_is_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Nonzero when one of the 8 bytes of x ends the fast path of a string: '"',
 * '\\', a control character or a non-ASCII byte (exact, no false hits). */
static inline uint64_t gp_json_stop8(uint64_t x)
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

/* c->p at the opening quote. v->p, v->n: the bytes between the quotes;
 * v->esc: whether they hold escapes. */
static GP_JSON_ALWAYS_INLINE int gp_json_string(struct gp_json_cur *c, struct gp_json_val *v)
{
#define GP_JSON_R16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
	/* 1 for bytes that end the fast path inside a string */
	static const unsigned char stop[256] = {
		GP_JSON_R16(1), GP_JSON_R16(1),                 /* control characters */
		0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* '"' */
		GP_JSON_R16(0), GP_JSON_R16(0),
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* '\\' */
		GP_JSON_R16(0), GP_JSON_R16(0),
		GP_JSON_R16(1), GP_JSON_R16(1), GP_JSON_R16(1), GP_JSON_R16(1), /* UTF-8 */
		GP_JSON_R16(1), GP_JSON_R16(1), GP_JSON_R16(1), GP_JSON_R16(1),
	};
#undef GP_JSON_R16
	const unsigned char *p = c->p + 1, *end = c->end;

	v->type = GP_JSON_STR;
	v->esc = 0;
	v->p = (const char *)p;
	for (;;) {
#ifdef __SSE2__
		/* 16 bytes a step: kernels' names are hundreds of bytes. Signed,
		 * bytes below 0x20 and from 0x80 up are both less than ' '. */
		while (p + 16 <= end) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
			__m128i stop16 = _mm_or_si128(
				_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
					     _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
				_mm_cmplt_epi8(x, _mm_set1_epi8(' ')));
			unsigned m = (unsigned)_mm_movemask_epi8(stop16);

			if (m) {
				p += __builtin_ctz(m);
				goto stopped;
			}
			p += 16;
		}
#else
		/* 8 a step elsewhere (under SSE2 the last few bytes of a line
		 * go one by one: this loop's constants cost every string) */
		while (p + 8 <= end) {
			uint64_t x, m;

			memcpy(&x, p, 8);
			m = gp_json_stop8(x);
			if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				/* the first stop byte: no need to look it up again
				 * (a load that waits on this one, a fifth of the scan) */
				p += __builtin_ctzll(m) >> 3;
				goto stopped;
#else
				break;
#endif
			}
			p += 8;
		}
#endif
		while (p < end && !stop[*p])
			p++;
		if (p >= end)
			return gp_json_fail(c, "unterminated string");
	stopped: __attribute__((unused)); /* none reach it on a big-endian host without SSE2 */
		if (*p == '"')
			break;
		if (*p < 0x20)
			return gp_json_fail(c, "control character in a string");
		if (*p == '\\') {
			v->esc = 1;
			if (end - p < 2)
				return gp_json_fail(c, "unterminated string");
			if (p[1] == 'u') {
				if (end - p < 6 || !gp_json_is_hex(p[2]) || !gp_json_is_hex(p[3]) ||
				    !gp_json_is_hex(p[4]) || !gp_json_is_hex(p[5]))
					return gp_json_fail(c, "bad \\u escape");
				p += 6;
			} else if (p[1] && strchr("\"\\/bfnrt", p[1])) {
				p += 2;
			} else {
				return gp_json_fail(c, "bad escape in a string");
			}
			continue;
		}
		{
			int k = gp_utf8_seq(p, (size_t)(end - p));

			if (k < 0)
				return gp_json_fail(c, "invalid UTF-8 in a string");
			p += k;
		}
	}
	if ((size_t)(p - (const unsigned char *)v->p) > UINT32_MAX)
		return gp_json_fail(c, "string too long");
	v->n = (uint32_t)(p - (const unsigned char *)v->p);
	c->p = p + 1;
	return 0;
}

/* p past the digits from p on (none, one or many) before end. Eight at a
 * step where eight bytes can be read: timestamps have a dozen. */
static GP_JSON_ALWAYS_INLINE const unsigned char *gp_json_digits_end(const unsigned char *p,
								    const unsigned char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull;

	while (end - p >= 8) {
		uint64_t x, stop;

		memcpy(&x, p, 8);
		/* a byte is a digit iff its high nibble is 3 and stays 3 when
		 * 6 is added (0x30-0x39); a carry out of a byte comes only from
		 * one past 0xF9, no digit, after which nothing is looked at */
		stop = ((x & (ones * 0xF0)) ^ (ones * 0x30)) |
		       (((x + ones * 0x06) & (ones * 0xF0)) ^ (ones * 0x30));
		stop = ((stop >> 4) + ones * 0x7F) & (ones * 0x80);
		if (stop)
			return p + (__builtin_ctzll(stop) >> 3);
		p += 8;
	}
#endif
	while (p < end && gp_json_is_digit(*p))
		p++;
	return p;
}

/* Eight digits in a word, the first in the lowest byte (zero bytes there
 * count as leading zeros), as their value: pairs, fours and eights of
 * digits combined a step each. */
static inline uint64_t gp_json_eight_digits(uint64_t w)
{
	uint64_t x = w & 0x0F0F0F0F0F0F0F0Full;

	x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;
	x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull;
	return (x * 10000 + (x >> 32)) & 0xFFFFFFFFull;
}

/* The value of a number's digits before its point from v->lead, where
 * v->lead_n says they are there (1 to 8 digits, the first in the lowest
 * byte): moved to the top, the zeros below them leading zeros. */
static inline uint64_t gp_json_lead_value(const struct gp_json_val *v)
{
	return gp_json_eight_digits(v->lead << (8 * (8 - v->lead_n)));
}

/* The n digits at p (8 to 16 of them, all inside the text) as a number:
 * 0, or -1 where n is out of that range or a byte is no digit (the caller
 * goes a digit at a time). Two words, the first n - 8 digits and the last
 * 8, each read inside the digits. */
static inline int gp_json_digits_words(const char *p, size_t n, uint64_t *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t hi, lo, bad;

	if (n < 8 || n > 16)
		return -1;
	memcpy(&hi, p, 8);
	memcpy(&lo, p + n - 8, 8);
	/* a byte is a digit where its high half is 3 and adding 6 keeps it
	 * so (gp_json_digits_end); a carry comes only from a byte that fails */
	bad = ((hi & (ones * 0xF0)) ^ (ones * 0x30)) |
	      (((hi + ones * 0x06) & (ones * 0xF0)) ^ (ones * 0x30)) |
	      ((lo & (ones * 0xF0)) ^ (ones * 0x30)) |
	      (((lo + ones * 0x06) & (ones * 0xF0)) ^ (ones * 0x30));
	if (bad)
		return -1;
	*out = n == 8 ? gp_json_eight_digits(lo)
		      : gp_json_eight_digits(hi << (8 * (16 - n))) * 100000000u +
				gp_json_eight_digits(lo);
	return 0;
#else
	(void)p;
	(void)n;
	(void)out;
	return -1;
#endif
}

/* c->p at '-' or a digit. v->p, v->n: the number's text; v->num its flags;
 * v->lead, v->lead_n: its first digits where one word held them all. */
static GP_JSON_ALWAYS_INLINE int gp_json_number(struct gp_json_cur *c, struct gp_json_val *v)
{
	const unsigned char *p = c->p, *end = c->end;

	v->type = GP_JSON_NUM;
	v->num = 0;
	v->lead_n = 0;
	v->p = (const char *)p;
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* Most numbers of a trace are unsigned, with or without a fraction,
	 * and end within 16 bytes: their digits found in one step. Anything
	 * else (a sign, an exponent, a leading zero before a digit, 16 bytes
	 * of digits, the line's end near) is read below. */
	if (end - p >= 16) {
		__m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p),
					 _mm_set1_epi8('0'));
		/* a digit where (byte - '0') is at most 9, unsigned */
		unsigned dig = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d));
		unsigned whole = (unsigned)__builtin_ctz(~dig), n = whole;

		if (whole >= 1 && whole < 16 && (p[0] != '0' || whole == 1)) {
			if (p[n] == '.') {
				n += 1 + (unsigned)__builtin_ctz(~(dig >> (whole + 1)));
				v->num = GP_JSON_FRAC;
			}
			/* a fraction has a digit; its end, and no exponent */
			if (n < 16 && (!v->num || n >= whole + 2) && (p[n] | 0x20) != 'e') {
				if (n > c->max_number)
					return gp_json_fail(c, "number too long");
				memcpy(&v->lead, p, 8);
				v->lead_n = whole < 8 && p[0] != '0' ? (uint8_t)whole : 0;
				v->n = n;
				c->p = p + n;
				return 0;
			}
			v->num = 0;
		}
	}
#endif
	v->lead = 0; /* set whatever the path, as lead_n is */
	if (p < end && *p == '-') {
		v->num |= GP_JSON_NEG;
		p++;
	}
	if (p >= end || !gp_json_is_digit(*p))
		return gp_json_fail(c, "bad number");
	if (*p == '0') {
		p++;
	} else {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		const unsigned char *first = p;

		if (end - p >= 8) {
			memcpy(&v->lead, p, 8);
			p = gp_json_digits_end(p, end);
			if (p - first < 8)
				v->lead_n = (uint8_t)(p - first);
		} else {
			p = gp_json_digits_end(p, end);
		}
#else
		p = gp_json_digits_end(p, end);
#endif
	}
	if (p < end && *p == '.') {
		v->num |= GP_JSON_FRAC;
		p++;
		if (p >= end || !gp_json_is_digit(*p))
			return gp_json_fail(c, "bad number");
		p = gp_json_digits_end(p, end);
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		v->num |= GP_JSON_EXP;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !gp_json_is_digit(*p))
			return gp_json_fail(c, "bad number");
		while (p < end && gp_json_is_digit(*p))
			p++;
	}
	if ((size_t)(p - c->p) > c->max_number || (size_t)(p - c->p) > UINT32_MAX)
		return gp_json_fail(c, "number too long");
	v->n = (uint32_t)(p - c->p);
	c->p = p;
	return 0;
}

/* The n decimal digits at p as a number at most max; 0 or -EINVAL (also
 * where a byte is no digit). */
static inline int gp_json_digits_u64(const char *p, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)p[i] - '0';

		if (d > 9)
			return -EINVAL;
		/* 19 digits stay below 10^19: only a 20th can overflow, and
		 * max is checked once, after */
		if (i >= 19 && x > (UINT64_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	if (x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

/* A number v scanned as a plain non-negative integer (no sign, fraction
 * or exponent) as one, at most max: 0 or -EINVAL. */
static inline int gp_json_val_u64(const struct gp_json_val *v, uint64_t max, uint64_t *out)
{
	uint64_t x;

	if (v->type != GP_JSON_NUM || v->num)
		return -EINVAL;
	if (v->lead_n)
		x = gp_json_lead_value(v);
	else if (gp_json_digits_words(v->p, v->n, &x))
		return gp_json_digits_u64(v->p, v->n, max, out);
	if (x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

/* A number that is a plain non-negative integer (no sign, fraction or
 * exponent), at most max. */
static inline int gp_json_uint(struct gp_json_cur *c, uint64_t max, uint64_t *out)
{
	struct gp_json_val v;

	if (gp_json_number(c, &v) || v.num)
		return gp_json_fail(c, "not an unsigned integer");
	if (gp_json_val_u64(&v, max, out))
		return gp_json_fail(c, "integer out of range");
	return 0;
}

/* lit: "true", "false" or "null", n its length. */
static inline int gp_json_literal(struct gp_json_cur *c, const char *lit, size_t n)
{
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return gp_json_fail(c, "bad literal");
	c->p += n;
	return 0;
}
#define GP_JSON_LITERAL(c, lit) gp_json_literal((c), lit, sizeof(lit) - 1)

static int gp_json_skip_container(struct gp_json_cur *c, int level);

/* Any value into *v (containers: their type only, their inside checked and
 * skipped); level: how many containers enclose it. */
static GP_JSON_ALWAYS_INLINE int gp_json_value(struct gp_json_cur *c, int level,
					       struct gp_json_val *v)
{
	if (c->p >= c->end)
		return gp_json_fail(c, "missing value");
	switch (*c->p) {
	case '"':
		return gp_json_string(c, v);
	case '{':
	case '[': {
		/* the container's text, brackets included, for a reader that
		 * wants what is inside (torch.stack's frames) */
		const unsigned char *start = c->p;
		int r;

		v->type = *c->p == '{' ? GP_JSON_OBJ : GP_JSON_ARR;
		r = gp_json_skip_container(c, level + 1);
		v->p = (const char *)start;
		v->n = (uint32_t)(c->p - start);
		return r;
	}
	case 't':
		v->type = GP_JSON_TRUE;
		return GP_JSON_LITERAL(c, "true");
	case 'f':
		v->type = GP_JSON_FALSE;
		return GP_JSON_LITERAL(c, "false");
	case 'n':
		v->type = GP_JSON_NULL;
		return GP_JSON_LITERAL(c, "null");
	default:
		if (*c->p == '-' || gp_json_is_digit(*c->p))
			return gp_json_number(c, v);
		return gp_json_fail(c, "bad value");
	}
}

/* c->p at an object member: its name into *name, then past the ':' and the
 * whitespace after it. */
static GP_JSON_ALWAYS_INLINE int gp_json_member_name(struct gp_json_cur *c,
						     struct gp_json_val *name)
{
	if (c->p >= c->end || *c->p != '"')
		return gp_json_fail(c, "expected a member name");
	if (gp_json_string(c, name))
		return -EINVAL;
	gp_json_ws(c);
	if (c->p >= c->end || *c->p != ':')
		return gp_json_fail(c, "expected ':'");
	c->p++;
	gp_json_ws(c);
	return 0;
}

/* c->p at '{' or '['; level: the container's own (1 for the outermost).
 * Not inlined: it recurses, and nested values are rare in traces. */
static __attribute__((noinline, unused)) int gp_json_skip_container(struct gp_json_cur *c,
								    int level)
{
	unsigned char close = *c->p == '{' ? '}' : ']';
	int obj = close == '}';
	struct gp_json_val tmp;

	if (level > c->max_levels)
		return gp_json_fail(c, "nested too deeply");
	c->p++;
	gp_json_ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return 0;
	}
	for (;;) {
		if (obj && gp_json_member_name(c, &tmp))
			return -EINVAL;
		if (gp_json_value(c, level, &tmp))
			return -EINVAL;
		gp_json_ws(c);
		if (c->p >= c->end)
			return gp_json_fail(c, "unterminated object or array");
		if (*c->p == ',') {
			c->p++;
			gp_json_ws(c);
			continue;
		}
		if (*c->p == close) {
			c->p++;
			return 0;
		}
		return gp_json_fail(c, "expected ',' or the end of an object or array");
	}
}

#endif
