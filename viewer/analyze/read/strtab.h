/* Interned, reference-counted strings: every name taken from a trace (NVTX
 * ranges, module paths, API names) is stored once and freed when nothing
 * holds it any more, so memory follows what is alive, not how many events
 * named it. Names are kept as the trace has them (valid UTF-8, control
 * characters included: the text report escapes what could act on a
 * terminal, viewer/render/term.h; the JSON report escapes them as JSON);
 * anything longer than AN_STR_MAX is cut (at a UTF-8 boundary) and ends in
 * "...". */
#ifndef GPUPROF_AN_STRTAB_H
#define GPUPROF_AN_STRTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AN_STR_MAX 1024

struct an_str {
	uint32_t ref;
	uint32_t hash;
	uint32_t len;
	char s[]; /* NUL-terminated */
};

struct an_strtab {
	struct an_str **slots;
	size_t cap;   /* power of two */
	size_t count;
};

int an_strtab_init(struct an_strtab *t);
void an_strtab_free(struct an_strtab *t);
/* A new reference to the string s[0..n) (valid UTF-8), or NULL when out of
 * memory. */
struct an_str *an_str_intern(struct an_strtab *t, const char *s, size_t n);
/* The same for bytes built from interned strings. */
struct an_str *an_str_intern_raw(struct an_strtab *t, const char *s, size_t n);
void an_str_unref(struct an_strtab *t, struct an_str *s); /* s may be NULL */

static inline struct an_str *an_str_ref(struct an_str *s)
{
	if (s)
		s->ref++;
	return s;
}

static inline const char *an_str_c(const struct an_str *s)
{
	return s ? s->s : NULL;
}

/* Whether s (may be NULL) begins with the n bytes of prefix. */
static inline int an_str_starts(const struct an_str *s, const char *prefix, size_t n)
{
	return s && s->len >= n && memcmp(s->s, prefix, n) == 0;
}

#endif
