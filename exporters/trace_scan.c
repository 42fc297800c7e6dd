/* One trace line -> raw values of the members that matter, see trace_scan.h.
 * The hand-written scanner of exporters/json_scan.h rather than json-c:
 * this is the hot loop of the whole analysis (bench/RESULTS.md has both
 * measured). Here: the key tables and the loop over an event's members. */
#include "trace_scan.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"

/* The analyzer's strictness on top of the shared scanner: nesting at most
 * GP_TR_MAX_DEPTH, numbers at most GP_TR_MAX_NUMBER bytes. */
#define GP_TR_MAX_NUMBER 4096

/* Every member name of the format, read or not: key is the member's
 * place in trace_scan.h's enums where an analysis reads it, else -1. */
struct keydef {
	const char *name;
	unsigned char len;
	signed char key;
};

/* Made from exporters/trace_format.def (trace_scan.h's enums). */
#define KEY_AN(id) id
#define KEY_NO(id) -1
#define GP_FORMAT(version, meaning)
#define GP_CAT(id, name, meaning)
#define GP_KIND(id, name, meaning)
#define GP_EVENT(id, name, ph, scope, cat, meaning)
#define GP_ARG(event, field, type, unit, when, meaning)
#define GP_FIELD(id, key, read)
#define GP_TOP(id, key, read, type, unit, meaning) \
	{ key, sizeof(key) - 1, KEY_##read(TK_##id) },
static const struct keydef top_keys[] = {
#include "trace_format.def"
};
#undef GP_TOP
#define GP_TOP(id, key, read, type, unit, meaning)
#undef GP_FIELD
#define GP_FIELD(id, key, read) \
	{ key, sizeof(key) - 1, KEY_##read(AK_##id) },
static const struct keydef arg_keys[] = {
#include "trace_format.def"
};
#include "trace_format_undef.h"
#undef KEY_AN
#undef KEY_NO

/* Keys are found by length and first byte (at most a few candidates),
 * then compared a word at a time. A member named as the guess says is
 * matched whole instead, '"name":' at once (where that is KP_BYTES at
 * most). */
#define LK_LEN 24
#define LK_WAYS 4
#define LK_KEYS 255
#define KP_BYTES 24 /* three words */
struct keypat {
	uint64_t word[3], mask[3]; /* '"name":', zero padded; its bytes */
	unsigned char len;
};
struct keyindex {
	unsigned char slot[LK_LEN][26][LK_WAYS]; /* index into the table + 1; 0: none */
	uint64_t word[LK_KEYS][3];             /* each key, zero padded */
	struct keypat pat[LK_KEYS];
};
_Static_assert(GP_TR_TOP_ALL < LK_KEYS && GP_TR_ARG_ALL < LK_KEYS, "LK_KEYS too small");
_Static_assert(TK_N <= 32 && AK_N <= 128, "top_set, args_set: too few bits");
_Static_assert(GP_TR_TOP_ALL + 1 < 256 && GP_TR_ARG_ALL + 1 < 256, "guesses are uint8_t");
static struct keyindex top_index, arg_index;
static int index_ready;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static void key_words(const char *p, uint32_t n, const char *end, uint64_t w[3]);

/* 0, or -1 where a name of the format breaks the index's limits (its
 * first byte, its length or LK_WAYS): then no line is scanned. */
static int index_build(struct keyindex *ix, const struct keydef *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct keypat *kp = &ix->pat[i];
		char pat[KP_BYTES];
		unsigned char *s;
		int w = 0;

		if (t[i].len == 0 || t[i].len >= LK_LEN || t[i].name[0] < 'a' || t[i].name[0] > 'z')
			return -1;
		s = ix->slot[t[i].len][t[i].name[0] - 'a'];
		while (w < LK_WAYS && s[w])
			w++;
		if (w == LK_WAYS)
			return -1;
		s[w] = (unsigned char)(i + 1);
		key_words(t[i].name, t[i].len, t[i].name + t[i].len, ix->word[i]);
		if (t[i].len + 3u > KP_BYTES)
			continue; /* looked up, never guessed (kp->len 0) */
		kp->len = (unsigned char)(t[i].len + 3);
		pat[0] = '"';
		memcpy(pat + 1, t[i].name, t[i].len);
		pat[t[i].len + 1] = '"';
		pat[t[i].len + 2] = ':';
		key_words(pat, kp->len, pat + kp->len, kp->word);
		for (unsigned b = 0; b < 3; b++) {
			unsigned in = kp->len > 8 * b ? kp->len - 8 * b : 0;

			kp->mask[b] = in >= 8 ? ~0ull : in ? (1ull << (8 * in)) - 1 : 0;
		}
	}
	return 0;
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

/* The index of the name k in the table, or -1 when the format has none. */
static int lookup(const struct keyindex *ix, const struct gp_json_val *k, const char *end)
{
	const unsigned char *s;
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
			return s[i] - 1;
	}
	return -1;
}

/* c->p at a member: where its bytes are '"name":' of the name guess - 1
 * (the unescaped name, then its colon, so nothing a scan would find
 * otherwise), c->p past them and the blanks after; that name's index.
 * -1, c->p where it was, when they are not (or guess is 0). */
static GP_JSON_ALWAYS_INLINE int guessed(const struct keyindex *ix, unsigned guess,
					 struct gp_json_cur *c)
{
	const struct keypat *kp;
	const char *p = (const char *)c->p, *end = (const char *)c->end;
	uint64_t d;

	if (!guess)
		return -1;
	kp = &ix->pat[guess - 1];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (__builtin_expect(end - p >= KP_BYTES, 1)) {
		uint64_t w; /* KP_BYTES are there; most names take one word */

		memcpy(&w, p, 8);
		d = (w ^ kp->word[0]) & kp->mask[0];
		if (kp->len > 8) {
			memcpy(&w, p + 8, 8);
			d |= (w ^ kp->word[1]) & kp->mask[1];
			if (kp->len > 16) {
				memcpy(&w, p + 16, 8);
				d |= (w ^ kp->word[2]) & kp->mask[2];
			}
		}
	} else
#endif
	{
		/* a line's last members (or a big-endian host): the name's
		 * own bytes, none read past the line's end */
		uint64_t w[3];

		if (end - p < kp->len)
			return -1;
		key_words(p, kp->len, end, w);
		d = ((w[0] ^ kp->word[0]) & kp->mask[0]) | ((w[1] ^ kp->word[1]) & kp->mask[1]) |
		    ((w[2] ^ kp->word[2]) & kp->mask[2]);
	}
	if (d)
		return -1;
	c->p += kp->len;
	gp_json_ws(c);
	return (int)guess - 1;
}

/* Events no analysis uses, known from ph, cat and name (they come first in
 * gpuprof's lines): counters, metadata, flows, and complete events other
 * than CUDA API calls and collectives' kernels (other kernels, copies,
 * sets). The rest of such a line is still checked, without looking at its
 * members. */
static int ignorable(const struct gp_tr_members *l)
{
	const struct gp_json_val *ph = &l->top[TK_PH], *cat = &l->top[TK_CAT];
	const struct gp_json_val *name = &l->top[TK_NAME];

	if (ph->type != GP_JSON_STR || ph->n != 1)
		return 0;
	switch (ph->p[0]) {
	case 'C':
	case 'M':
	case 's':
	case 'f':
		return 1;
	case 'X':
		if (cat->type != GP_JSON_STR || GP_JV_IS(cat, GP_CAT_CUDA_RUNTIME) ||
		    GP_JV_IS(cat, GP_CAT_CUDA_DRIVER))
			return 0;
		/* a kernel whose name is still to come is read whole */
		return !GP_JV_IS(cat, GP_CAT_KERNEL) ||
		       (name->type == GP_JSON_STR &&
			!gp_tr_is_coll_kernel((const char *)name->p, name->n));
	default:
		return 0;
	}
}

/* The kind of line (trace_scan.h) once ph, name or cat (v) is read: what
 * tells gpuprof's kinds of event apart, their member orders (ph's letter,
 * the name's and cat's lengths and first bytes), hashed into the kinds
 * there are. */
static GP_JSON_ALWAYS_INLINE uint8_t next_kind(uint8_t kind, const struct gp_json_val *v)
{
	unsigned x = v->type != GP_JSON_STR ? 0 : v->n == 1 ? (unsigned char)v->p[0] :
			v->n ? v->n * 8u ^ (unsigned char)v->p[0] : 0;

	return (uint8_t)((kind * 37u + x) & (GP_TR_KINDS - 1));
}

/* c->p at a member of an object of the line (args: its "args" object, or
 * the line's own): its name read, guessed or looked up, and the guesses
 * taught; c->p at its value. The name's index in the format's enums, -1
 * where the analysis does not read it, or -2 (-EINVAL's) where the name
 * is bad. after: the slot of next[] (struct gp_tr_members) for this
 * member, then for the next. */
static GP_JSON_ALWAYS_INLINE int member_name(struct gp_json_cur *c, struct gp_tr_members *line,
					     const int args, size_t *after)
{
	const struct keyindex *ix = args ? &arg_index : &top_index;
	uint8_t *next = args ? line->next_arg[line->kind] : line->next_top[line->kind];
	int i = guessed(ix, next[*after], c);

	if (i < 0) {
		struct gp_json_val k;

		gp_json_ws(c); /* member_end leaves what follows a ',' */
		if (gp_json_member_name(c, &k))
			return -2;
		i = lookup(ix, &k, (const char *)c->end);
		next[*after] = i >= 0 && ix->pat[i].len ? (uint8_t)(i + 1) : 0;
	}
	*after = i >= 0 ? (size_t)i + 1 : (args ? GP_TR_ARG_ALL : GP_TR_TOP_ALL) + 1;
	return i >= 0 ? (args ? arg_keys : top_keys)[i].key : -1;
}

/* c->p after a member's value: 0 past the ',' before the next member
 * (the blanks after it are member_name's to pass: a guessed name comes
 * at once), 1 past the object's '}', or -EINVAL. */
static GP_JSON_ALWAYS_INLINE int member_end(struct gp_json_cur *c)
{
	if (c->p < c->end && *c->p == ',') { /* gpuprof's lines: no blanks */
		c->p++;
		return 0;
	}
	gp_json_ws(c);
	if (c->p >= c->end)
		return gp_json_fail(c, "unterminated object");
	if (*c->p == ',') {
		c->p++;
		return 0;
	}
	if (*c->p != '}')
		return gp_json_fail(c, "expected ',' or '}'");
	c->p++;
	return 1;
}

/* c->p past the '{' of the line's "args" and the blanks after it, at a
 * member: them all into line->args; 0 past its '}', or -EINVAL. */
static GP_JSON_ALWAYS_INLINE int scan_args(struct gp_json_cur *c, struct gp_tr_members *line)
{
	size_t after = 0;
	struct gp_json_val v;

	for (;;) {
		int which = member_name(c, line, 1, &after), r;

		if (which == -2)
			return -EINVAL;
		/* marked set first: a value that fails half written is
		 * cleared before the next line all the same */
		if (which >= 0)
			line->args_set[which >> 6] |= 1ull << (which & 63);
		if (gp_json_value(c, 2, which >= 0 ? &line->args[which] : &v))
			return -EINVAL;
		if ((r = member_end(c)))
			return r < 0 ? r : 0;
	}
}

/* c->p at the '{' of a line's object: its members, and those of its
 * "args" object, into line. Both loops in one function: a call for args
 * cost a sixth of the scan (the frame of a function this large). */
static int scan_event(struct gp_json_cur *c, struct gp_tr_members *line)
{
	size_t after = 0;
	struct gp_json_val k, v;

	line->kind = 0;
	c->p++;
	gp_json_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return 0;
	}
	for (;;) {
		int which = -1, r;

		if (line->ignored) {
			gp_json_ws(c);
			if (gp_json_member_name(c, &k))
				return -EINVAL;
		} else if ((which = member_name(c, line, 0, &after)) == -2) {
			return -EINVAL;
		}
		if (which == TK_ARGS && c->p < c->end && *c->p == '{') {
			line->top[TK_ARGS].type = GP_JSON_OBJ;
			line->top_set |= 1u << TK_ARGS;
			c->p++;
			gp_json_ws(c);
			if (c->p < c->end && *c->p == '}')
				c->p++;
			else if (scan_args(c, line))
				return -EINVAL;
		} else {
			/* straight into its place: a copy through the stack
			 * stalls on store forwarding, a fifth of the parse;
			 * marked set first, as in scan_args */
			if (which >= 0)
				line->top_set |= 1u << which;
			if (gp_json_value(c, 1, which >= 0 ? &line->top[which] : &v))
				return -EINVAL;
			if (which == TK_PH || which == TK_NAME || which == TK_CAT)
				line->kind = next_kind(line->kind, &line->top[which]);
			if (which == TK_PH || which == TK_CAT) {
				line->ignored = ignorable(line);
				if (line->ignored && line->skip_ignored) {
					if (c->end[-1] != '}')
						return gp_json_fail(c, "unterminated object");
					c->p = c->end;
					return 0;
				}
			}
		}
		if ((r = member_end(c)))
			return r < 0 ? r : 0;
	}
}

static void indexes_build(void)
{
	if (index_build(&top_index, top_keys, GP_TR_TOP_ALL) ||
	    index_build(&arg_index, arg_keys, GP_TR_ARG_ALL))
		return; /* trace_format.def broke a limit: every scan says so */
	__atomic_store_n(&index_ready, 1, __ATOMIC_RELEASE);
}

void gp_tr_members_clear(struct gp_tr_members *out)
{
	/* what the previous line set, not the whole struct: the few top
	 * members all at once (a store each, no loop on the bits) */
	out->ignored = 0;
	/* unrolled: at -O2 the loop took three more instructions a store */
#pragma GCC unroll 16
	for (int i = 0; i < TK_N; i++)
		out->top[i].type = GP_JSON_NONE;
	out->top_set = 0;
	for (int w = 0; w < 2; w++) {
		while (out->args_set[w]) {
			int i = __builtin_ctzll(out->args_set[w]);

			out->args[64 * w + i].type = GP_JSON_NONE;
			out->args_set[w] &= out->args_set[w] - 1;
		}
	}
}

int gp_tr_scan_line(const char *p, size_t n, struct gp_tr_members *out, const char **why)
{
	struct gp_json_cur c = { (const unsigned char *)p, (const unsigned char *)p + n, NULL,
				  GP_TR_MAX_DEPTH, GP_TR_MAX_NUMBER };

	if (!__atomic_load_n(&index_ready, __ATOMIC_ACQUIRE)) {
		pthread_once(&index_once, indexes_build); /* workers scan too */
		if (!__atomic_load_n(&index_ready, __ATOMIC_ACQUIRE)) {
			*why = "the scanner's key index does not hold the format's names";
			return -EINVAL;
		}
	}
	gp_tr_members_clear(out);
	gp_json_ws(&c);
	if (c.p >= c.end || *c.p != '{') {
		*why = "not a JSON object";
		return -EINVAL;
	}
	if (scan_event(&c, out)) {
		*why = c.why;
		return -EINVAL;
	}
	gp_json_ws(&c);
	if (c.p != c.end) {
		*why = "text after the object";
		return -EINVAL;
	}
	return 0;
}

int gp_jv_i64_general(const struct gp_json_val *v, int64_t *out)
{
	struct gp_json_val abs = *v;
	uint64_t x;

	if (v->type != GP_JSON_NUM || (v->num & (GP_JSON_FRAC | GP_JSON_EXP)))
		return -EINVAL;
	if (v->num & GP_JSON_NEG) {
		abs.p++;
		abs.n--;
		abs.num = 0; /* lead is the digits' already */
	}
	if (gp_jv_u64(&abs, &x) || x > (uint64_t)INT64_MAX)
		return -EINVAL;
	*out = (v->num & GP_JSON_NEG) ? -(int64_t)x : (int64_t)x;
	return 0;
}

#define MAX_US 1000000000000000ll /* 1e15 us, 31 years: ns fit in int64 */

int gp_jv_us_to_ns_general(const struct gp_json_val *v, int64_t *out)
{
	const char *p = v->p, *end = v->p + v->n;
	int64_t us = 0, frac = 0;
	int neg = 0, digits = 0;

	if (v->type != GP_JSON_NUM)
		return -EINVAL;
	if (v->num & GP_JSON_EXP) {
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
	{
		/* at most 15 digits, so below MAX_US (10^15), counted instead
		 * of checked a digit; unsigned, so that more wrap harmlessly
		 * before the count refuses them */
		const char *whole = p;
		uint64_t u = 0;

		if (v->lead_n) {
			u = gp_json_lead_value(v);
			p += v->lead_n;
		}
		for (; p < end && *p != '.'; p++)
			u = u * 10 + (uint64_t)(*p - '0');
		if (p - whole > 15)
			return -EINVAL;
		us = (int64_t)u;
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

static unsigned hexval(char ch)
{
	unsigned char c = (unsigned char)ch;

	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Eight hex digits in a word, the first in the lowest byte, as their
 * value (the bytes checked by the caller): each byte's value ('a' and 'A'
 * have bit 6 set and 1 below, so 1 + 9), then pairs, fours and eights of
 * digits combined a step each, as gp_json_eight_digits does decimals. */
static inline uint64_t eight_hex(uint64_t w)
{
	uint64_t x = (w & 0x0F0F0F0F0F0F0F0Full) + ((w >> 6) & 0x0101010101010101ull) * 9;

	x = (x * 16 + (x >> 8)) & 0x00FF00FF00FF00FFull;
	x = (x * 256 + (x >> 16)) & 0x0000FFFF0000FFFFull;
	return (x * 65536 + (x >> 32)) & 0xFFFFFFFFull;
}

int gp_jv_hex(const struct gp_json_val *v, uint64_t *out)
{
	uint64_t x = 0;

	if (v->type != GP_JSON_STR || v->esc || v->n < 3 || v->n > 18 || v->p[0] != '0' ||
	    (v->p[1] != 'x' && v->p[1] != 'X'))
		return -EINVAL;
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (v->n >= 10) {
		/* 8 to 16 digits (an address): the first 8 and the last 8,
		 * both inside the string, checked together */
		unsigned h = v->n - 2;
		uint64_t hi, lo;
		__m128i b, d, l;

		memcpy(&hi, v->p + 2, 8);
		memcpy(&lo, v->p + v->n - 8, 8);
		b = _mm_set_epi64x((long long)hi, (long long)lo);
		d = _mm_sub_epi8(b, _mm_set1_epi8('0'));
		l = _mm_sub_epi8(_mm_or_si128(b, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
		if (_mm_movemask_epi8(_mm_or_si128(
			    _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d),
			    _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(5)), l))) != 0xFFFF)
			return -EINVAL;
		*out = h == 8 ? eight_hex(lo) : eight_hex(hi) >> (4 * (16 - h)) << 32 | eight_hex(lo);
		return 0;
	}
#endif
	for (uint32_t i = 2; i < v->n; i++) {
		unsigned char ch = (unsigned char)v->p[i];

		if (!gp_json_is_hex(ch))
			return -EINVAL;
		x = x * 16 + hexval((char)ch);
	}
	*out = x;
	return 0;
}

int gp_jv_bool(const struct gp_json_val *v, int *out)
{
	if (v->type == GP_JSON_TRUE)
		*out = 1;
	else if (v->type == GP_JSON_FALSE)
		*out = 0;
	else
		return -EINVAL;
	return 0;
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

int gp_jv_str(const struct gp_json_val *v, char *scratch, const char **s, size_t *n)
{
	const char *p = v->p, *end = v->p + v->n;
	char *o = scratch;

	if (v->type != GP_JSON_STR)
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

int gp_tr_why(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (why) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int gp_tr_bad_u64(const char *what, const struct gp_json_val *v, const char *key, uint64_t max,
		  char *why, size_t cap)
{
	uint64_t x;

	if (v->type == GP_JSON_NONE)
		return gp_tr_why(why, cap, "%s without \"%s\"", what, key);
	if (gp_jv_u64(v, &x))
		return gp_tr_why(why, cap, "%s: \"%s\" is not a non-negative integer", what, key);
	if (x > max)
		return gp_tr_why(why, cap, "%s: \"%s\" is absurd (%" PRIu64 ")", what, key, x);
	return 0;
}

int gp_tr_check_str(const char *what, const struct gp_json_val *v, const char *key, int required,
		    char *why, size_t cap)
{
	if (v->type == GP_JSON_NONE && !required)
		return 0;
	if (v->type != GP_JSON_STR)
		return gp_tr_why(why, cap, "%s: \"%s\" is %s", what, key,
			   v->type == GP_JSON_NONE ? "missing" : "not a string");
	return 1;
}
