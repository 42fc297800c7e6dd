/* The trace format's line scanner (the reader's second half, after
 * trace_reader.h cut the lines). Strict, fast reading of one trace line: one JSON object (RFC 8259,
 * well-formed UTF-8, nesting at most GP_TR_MAX_DEPTH), of which the members an
 * analysis uses are kept as raw values: the top-level ones (ph, name, ts...)
 * and those of the "args" object. Everything else is checked and skipped.
 *
 * json-c reads these lines at under 200k per second on the machine the
 * benchmark ran on; this reader at about 3 million (bench/RESULTS.md),
 * which is what the 1M events/s target needs. json-c still parses the few
 * JSON values nested inside strings (the gpuprof:torch mark). */
#ifndef GPUPROF_TRACE_SCAN_H
#define GPUPROF_TRACE_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "json_scan.h"
#include "trace_format.h"

#define GP_TR_MAX_DEPTH 32
/* Kinds of line whose member orders the scanner learns apart (a power of 2). */
#define GP_TR_KINDS 64

/* The kernel-name prefix that makes a kernel a collective (NCCL's): the
 * scanner keeps those kernels, the analysis follows them. */
#define GP_TR_COLL_PREFIX "nccl"
static inline int gp_tr_is_coll_kernel(const char *name, size_t n)
{
	size_t k = sizeof(GP_TR_COLL_PREFIX) - 1;

	return n > k && __builtin_memcmp(name, GP_TR_COLL_PREFIX, k) == 0;
}

/* Raw values are exporters/json_scan.h's struct gp_json_val: for strings
 * the bytes between the quotes, still escaped when esc is set; for numbers
 * the text. */

/* The members an analysis reads: those of exporters/trace_format.def marked
 * AN, in its order. */
#define GP_FORMAT(version, meaning)
#define GP_CAT(id, name, meaning)
#define GP_KIND(id, name, meaning)
#define GP_EVENT(id, name, ph, scope, cat, meaning)
#define GP_ARG(event, field, type, unit, when, meaning)
#define GP_FIELD(id, key, read)
#define GP_TOP(id, key, read, type, unit, meaning) GP_FMT_IF_##read(TK_##id, )
enum gp_tr_top_key {
#include "trace_format.def"
	TK_N
};
#undef GP_TOP
#define GP_TOP(id, key, read, type, unit, meaning)
#undef GP_FIELD
#define GP_FIELD(id, key, read) GP_FMT_IF_##read(AK_##id, )
enum gp_tr_arg_key {
#include "trace_format.def"
	AK_N
};
#undef GP_FIELD
#define GP_FIELD(id, key, read)
/* Every member name of the format, read or not (the scanner's guesses). */
#undef GP_TOP
#define GP_TOP(id, key, read, type, unit, meaning) +1
enum { GP_TR_TOP_ALL = 0
#include "trace_format.def"
};
#undef GP_TOP
#define GP_TOP(id, key, read, type, unit, meaning)
#undef GP_FIELD
#define GP_FIELD(id, key, read) +1
enum { GP_TR_ARG_ALL = 0
#include "trace_format.def"
};
#include "trace_format_undef.h"

struct gp_tr_members {
	struct gp_json_val top[TK_N];
	struct gp_json_val args[AK_N];
	uint32_t top_set;  /* which members the last line had */
	uint64_t args_set[2]; /* a bit per AK_*: AK_N is at most 128 */
	int ignored;       /* an event no analysis uses: members after ph and
			    * cat were checked, not recorded (or skipped) */
	int skip_ignored;  /* the caller's: the rest of an ignored event's line
			    * is skipped, not checked (the line holds one event,
			    * TRACE_FORMAT.md; its object must still close there) */
	/* The scanner's own, kept from line to line: for each kind of line,
	 * which member name came after which (slot 0 an object's start, 1 + i
	 * after the format's name i, the last after a name not in the
	 * format), as 1 + the format's name; 0 none yet. A writer writes the
	 * members of one kind of event in one order, so the next name is
	 * compared whole with one guess before it is scanned and looked up
	 * (trace_scan.c). The kind: a hash of ph, name and cat's first bytes
	 * and lengths as far as read (kinds that collide guess worse, never
	 * wrongly: a guess is compared whole). */
	uint8_t kind;
	uint8_t next_top[GP_TR_KINDS][GP_TR_TOP_ALL + 2];
	uint8_t next_arg[GP_TR_KINDS][GP_TR_ARG_ALL + 2];
};

/* 0, or -EINVAL with *why set to a short reason ("bad string", ...). out
 * must be zeroed before its first use and then reused line after line:
 * only what the previous line set is cleared. Members absent from the line
 * have type GP_JSON_NONE. */
int gp_tr_scan_line(const char *p, size_t n, struct gp_tr_members *out, const char **why);
/* Clears what the previous line set in out (as gp_tr_scan_line does first). */
void gp_tr_members_clear(struct gp_tr_members *out);
/* The line's trim before it is scanned (a trace's reader's): blanks at
 * both ends and one trailing ','. */
static inline void gp_tr_line_trim(const char **p, size_t *n)
{
	if (*n >= 2 && (*p)[0] == '{' && (*p)[*n - 1] == ',') {
		(*n)--; /* the writer's lines: no blanks, a ',' after the object */
		return;
	}
	while (*n && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t'))
		(*n)--;
	while (*n && ((*p)[0] == ' ' || (*p)[0] == '\t')) {
		(*p)++;
		(*n)--;
	}
	if (*n && (*p)[*n - 1] == ',')
		(*n)--;
}

/* Conversions of raw values; each returns 0 or -EINVAL (wrong type/range).
 * The integers and times run a few times a line: their common shapes are
 * inline here, the rest (signs, exponents, other decimals) in the _general
 * functions, which take any value. */
static inline int gp_jv_u64(const struct gp_json_val *v, uint64_t *out)
{
	return gp_json_val_u64(v, UINT64_MAX, out);
}
int gp_jv_i64_general(const struct gp_json_val *v, int64_t *out);
static inline int gp_jv_i64(const struct gp_json_val *v, int64_t *out)
{
	uint64_t x;

	if (v->type != GP_JSON_NUM || v->num)
		return gp_jv_i64_general(v, out);
	if (gp_json_val_u64(v, INT64_MAX, &x))
		return -EINVAL;
	*out = (int64_t)x;
	return 0;
}
/* microseconds (any JSON number, |v| < 1e15) to integer nanoseconds */
int gp_jv_us_to_ns_general(const struct gp_json_val *v, int64_t *out);
static inline int gp_jv_us_to_ns(const struct gp_json_val *v, int64_t *out)
{
	/* the writer's shape ("%.3f"): up to 15 digits, then three decimals
	 * or none; the digits from the scan's word or two words, the
	 * decimals at once */
	const char *p = v->p;
	size_t whole = 0;
	uint64_t u = 0;

	if (v->type == GP_JSON_NUM && !(v->num & (GP_JSON_NEG | GP_JSON_EXP)))
		whole = !(v->num & GP_JSON_FRAC)	       ? v->n
			: v->n >= 5 && p[v->n - 4] == '.' ? v->n - 4
							   : 0;
	if (!whole || whole > 15 ||
	    (v->lead_n == whole ? (u = gp_json_lead_value(v), 0)
				: gp_json_digits_words(p, whole, &u)) != 0)
		return gp_jv_us_to_ns_general(v, out);
	*out = (int64_t)u * 1000;
	if (whole < v->n)
		*out += (p[whole + 1] - '0') * 100 + (p[whole + 2] - '0') * 10 + (p[whole + 3] - '0');
	return 0;
}
/* "0x..." (1 to 16 hex digits) */
int gp_jv_hex(const struct gp_json_val *v, uint64_t *out);
int gp_jv_bool(const struct gp_json_val *v, int *out);
/* The string's bytes, unescaped into scratch (at least v->n bytes) when
 * needed; *s is not NUL-terminated. */
int gp_jv_str(const struct gp_json_val *v, char *scratch, const char **s, size_t *n);
/* String equality with a C literal, for unescaped strings. */
static inline int gp_jv_is(const struct gp_json_val *v, const char *lit, size_t litlen)
{
	return v->type == GP_JSON_STR && !v->esc && v->n == litlen &&
	       __builtin_memcmp(v->p, lit, litlen) == 0;
}
#define GP_JV_IS(v, lit) gp_jv_is((v), lit, sizeof(lit) - 1)

/* fmt's message into why (nothing where why is NULL): -EINVAL, for a
 * reader's "return gp_tr_why(why, cap, ...)". */
int gp_tr_why(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The checks every reader of the format makes of a member, with the one
 * wording of their messages ("WHAT without \"KEY\"", "WHAT: \"KEY\" is
 * ..."; WHAT says which event, "gpuprof.meta event"): 0, or -EINVAL with
 * the message in why (none where why is NULL). */
int gp_tr_bad_u64(const char *what, const struct gp_json_val *v, const char *key, uint64_t max,
		  char *why, size_t cap);
/* A required integer in [0, max]. */
static inline int gp_tr_need_u64(const char *what, const struct gp_json_val *v, const char *key,
				 uint64_t max, uint64_t *out, char *why, size_t cap)
{
	if (v->type != GP_JSON_NONE && !gp_json_val_u64(v, max, out))
		return 0;
	gp_tr_bad_u64(what, v, key, max, why, cap);
	return -EINVAL; /* said so (the compiler sees *out set where 0) */
}
/* A string: 1, or 0 where it is absent and !required. */
int gp_tr_check_str(const char *what, const struct gp_json_val *v, const char *key, int required,
		    char *why, size_t cap);

#endif
