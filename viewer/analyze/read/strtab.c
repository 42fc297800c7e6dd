/* Interned strings (see strtab.h): open addressing, linear probing,
 * backward-shift deletion so that removals leave no tombstones behind. */
#include "strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return (uint32_t)(h ^ (h >> 32));
}

int an_strtab_init(struct an_strtab *t)
{
	t->cap = 256;
	t->count = 0;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	return t->slots ? 0 : -ENOMEM;
}

void an_strtab_free(struct an_strtab *t)
{
	if (!t->slots)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	t->slots = NULL;
	t->cap = t->count = 0;
}

static int grow(struct an_strtab *t)
{
	size_t cap = t->cap * 2, mask = cap - 1;
	struct an_str **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct an_str *s = t->slots[i];
		size_t j;

		if (!s)
			continue;
		for (j = s->hash & mask; slots[j]; j = (j + 1) & mask)
			;
		slots[j] = s;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* The printable form: the bytes as they will be stored. */
static size_t clean_len(const char *s, size_t n, int *cut)
{
	*cut = 0;
	if (n <= AN_STR_MAX)
		return n;
	*cut = 1;
	n = AN_STR_MAX - 3;
	/* back to the start of a UTF-8 sequence */
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

static struct an_str *intern(struct an_strtab *t, const char *s, size_t n)
{
	char small[AN_STR_MAX + 1];
	size_t mask, i, len;
	int cut;
	uint32_t h;
	struct an_str *e;

	len = clean_len(s, n, &cut);
	memcpy(small, s, len);
	if (cut) {
		memcpy(small + len, "...", 3);
		len += 3;
	}
	h = hash_bytes(small, len);
	mask = t->cap - 1;
	for (i = h & mask; (e = t->slots[i]) != NULL; i = (i + 1) & mask) {
		if (e->hash == h && e->len == len && memcmp(e->s, small, len) == 0) {
			e->ref++;
			return e;
		}
	}
	if ((t->count + 1) * 2 > t->cap) {
		if (grow(t) != 0)
			return NULL;
		mask = t->cap - 1;
		for (i = h & mask; t->slots[i]; i = (i + 1) & mask)
			;
	}
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	e->ref = 1;
	e->hash = h;
	e->len = (uint32_t)len;
	memcpy(e->s, small, len);
	e->s[len] = '\0';
	t->slots[i] = e;
	t->count++;
	return e;
}

struct an_str *an_str_intern(struct an_strtab *t, const char *s, size_t n)
{
	return intern(t, s, n);
}

struct an_str *an_str_intern_raw(struct an_strtab *t, const char *s, size_t n)
{
	return intern(t, s, n);
}

void an_str_unref(struct an_strtab *t, struct an_str *s)
{
	size_t mask, i, j;

	if (!s || --s->ref > 0)
		return;
	mask = t->cap - 1;
	for (i = s->hash & mask; t->slots[i] != s; i = (i + 1) & mask)
		;
	/* backward shift: pull later members of the probe run into the hole */
	for (j = (i + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
		size_t home = t->slots[j]->hash & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = NULL;
	t->count--;
	free(s);
}
