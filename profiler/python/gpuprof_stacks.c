/* The calling thread's Python stack as an id, read without the GIL; see
 * gpuprof_stacks.h for why. Two tables under one lock: a walk of the frames
 * (code object, instruction) -> id, which is what each allocation looks up,
 * and the stack's text -> id, so that two walks that differ only in where
 * inside a line they stopped share one stack. */
#if defined(GP_STK_NO_PYTHON)
/* built where Python's headers were missing (gpuprof_build.py) */
#define GP_STK_CAN_READ 0
#define GP_STK_WHY "the allocator hook was built without Python's headers (install python3-dev)"
#else
#include <Python.h>
#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#define GP_STK_CAN_READ 0
#define GP_STK_WHY "--stacks reads the frames of CPython 3.11 to 3.13"
#elif !__has_include(<internal/pycore_frame.h>)
#define GP_STK_CAN_READ 0
#define GP_STK_WHY "CPython's internal headers (internal/pycore_frame.h) are not installed"
#else
#define GP_STK_CAN_READ 1
/* _PyInterpreterFrame and its helpers are CPython's internal API, in
 * headers that ask for Py_BUILD_CORE. */
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include <internal/pycore_frame.h>
#endif
#endif

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof_stacks.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gp_stk_counts counts;

#if GP_STK_CAN_READ

/* One frame of a walk: the code object and the instruction it is at; the
 * code's file name object and first line tell a code object from another
 * made later at the same address (the table keeps addresses, not
 * references: it cannot take one without the GIL). code NULL: the frames
 * left out of a deep stack, how many in off. */
struct raw {
	const void *code;
	const void *file;
	int32_t off;
	int32_t first;
};

#define MAX_KEPT (GP_STK_INNER + 1 + GP_STK_OUTER)

struct key_ent {
	uint64_t hash;
	size_t at;   /* first frame in raws */
	uint32_t n;  /* frames */
	uint32_t id; /* 0: empty slot */
};

struct text_ent {
	uint64_t hash;
	size_t at;   /* in texts */
	uint32_t len;
	uint32_t id; /* 0: empty slot */
};

static gp_ta_stack_fn emit;
static struct key_ent *keys;   /* open addressing, cap a power of two */
static size_t nkeys, keycap;
static struct raw *raws;
static size_t nraws, rawcap;
static struct text_ent *texts_t;
static size_t ntexts, textcap;
static char *texts;
static size_t ntextbytes, textbytecap;
static uint32_t next_id = 1;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

static uint64_t hash_raw(const struct raw *r, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h = mix(h, (uint64_t)(uintptr_t)r[i].code);
		h = mix(h, (uint64_t)(uint32_t)r[i].off);
	}
	return h ? h : 1;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

/* Grows an array of elem-sized items to hold need; 0 or -ENOMEM. */
static int reserve(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static _PyInterpreterFrame *current_frame(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030D0000
	return ts->current_frame;
#else
	return ts->cframe ? ts->cframe->current_frame : NULL;
#endif
}

/* The frames of the calling thread, innermost first: all of them up to
 * MAX_KEPT - 1, else the innermost GP_STK_INNER, a marker and the
 * outermost GP_STK_OUTER. Returns how many were written to out. */
static size_t walk(struct raw *out)
{
	PyThreadState *ts = PyGILState_GetThisThreadState();
	struct raw ring[GP_STK_OUTER];
	size_t n = 0, total = 0;

	if (!ts)
		return 0;
	for (_PyInterpreterFrame *f = current_frame(ts); f; f = f->previous) {
		PyCodeObject *co;
		struct raw r;

		/* frames being set up, and the C stack's entry frames, are no
		 * lines of code yet */
		if (_PyFrame_IsIncomplete(f))
			continue;
#if PY_VERSION_HEX >= 0x030D0000
		if (!f->f_executable || !PyCode_Check(f->f_executable))
			continue;
		co = (PyCodeObject *)f->f_executable;
#else
		co = f->f_code;
#endif
		r.code = co;
		r.file = co->co_filename;
		r.first = co->co_firstlineno;
		r.off = _PyInterpreterFrame_LASTI(f);
		if (n < GP_STK_INNER)
			out[n++] = r;
		else
			ring[(total - GP_STK_INNER) % GP_STK_OUTER] = r;
		total++;
		if (total > (1u << 20))
			break; /* a cycle would be a bug of ours: stop */
	}
	if (total <= GP_STK_INNER)
		return n;
	if (total <= GP_STK_INNER + GP_STK_OUTER) {
		for (size_t i = GP_STK_INNER; i < total; i++)
			out[n++] = ring[(i - GP_STK_INNER) % GP_STK_OUTER];
		return n;
	}
	out[n++] = (struct raw){ .off = (int32_t)(total - GP_STK_INNER - GP_STK_OUTER) };
	for (size_t i = total - GP_STK_OUTER; i < total; i++)
		out[n++] = ring[(i - GP_STK_INNER) % GP_STK_OUTER];
	return n;
}

/* Appends s, a str object, as UTF-8 of at most 1024 characters, control
 * characters and the separators as '?'. Reads only what a str holds; no
 * call into Python. */
static size_t put_str(char *dst, PyObject *s)
{
	size_t k = 0;

	if (!s || !PyUnicode_Check(s)) {
		dst[0] = '?';
		return 1;
	}
	Py_ssize_t len = PyUnicode_GET_LENGTH(s);
	int kind = PyUnicode_KIND(s);
	const void *data = PyUnicode_DATA(s);

	if (len > 1024)
		len = 1024;
	for (Py_ssize_t i = 0; i < len; i++) {
		Py_UCS4 c = PyUnicode_READ(kind, data, i);

		if (c < 0x20 || c == 0x7f || (c >= 0xd800 && c <= 0xdfff)) {
			dst[k++] = '?';
		} else if (c < 0x80) {
			dst[k++] = (char)c;
		} else if (c < 0x800) {
			dst[k++] = (char)(0xc0 | (c >> 6));
			dst[k++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			dst[k++] = (char)(0xe0 | (c >> 12));
			dst[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
			dst[k++] = (char)(0x80 | (c & 0x3f));
		} else {
			dst[k++] = (char)(0xf0 | (c >> 18));
			dst[k++] = (char)(0x80 | ((c >> 12) & 0x3f));
			dst[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
			dst[k++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return k;
}

/* The text of a walk (gp_ta_stack_fn's format) into a new buffer the
 * caller frees; NULL when out of memory. */
static char *text_of(const struct raw *r, size_t n, size_t *len)
{
	/* per frame: two names of at most 1024 characters, 4 bytes each, a
	 * line number and three separators */
	char *buf = malloc(n * (2 * 4096 + 32) + 1);
	size_t k = 0;

	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!r[i].code) {
			k += (size_t)sprintf(buf + k, "...%c0%c%d frames left out%c", GP_TA_US, GP_TA_US,
					     (int)r[i].off, GP_TA_RS);
			continue;
		}
		PyCodeObject *co = (PyCodeObject *)r[i].code;
		int line = r[i].off >= 0 ? PyCode_Addr2Line(co, r[i].off * (int)sizeof(_Py_CODEUNIT))
					 : co->co_firstlineno;

		k += put_str(buf + k, co->co_filename);
		k += (size_t)sprintf(buf + k, "%c%d%c", GP_TA_US, line < 0 ? 0 : line, GP_TA_US);
		k += put_str(buf + k, co->co_qualname);
		buf[k++] = GP_TA_RS;
	}
	*len = k;
	return buf;
}

static int same_walk(const struct key_ent *e, const struct raw *r, size_t n)
{
	if (e->n != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct raw *a = &raws[e->at + i];

		if (a->code != r[i].code || a->off != r[i].off || a->file != r[i].file ||
		    a->first != r[i].first)
			return 0;
	}
	return 1;
}

static int keys_grow(void)
{
	size_t cap = keycap ? keycap * 2 : 1024;
	struct key_ent *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < keycap; i++) {
		size_t j;

		if (!keys[i].id)
			continue;
		for (j = keys[i].hash & (cap - 1); t[j].id; j = (j + 1) & (cap - 1))
			;
		t[j] = keys[i];
	}
	free(keys);
	keys = t;
	keycap = cap;
	return 0;
}

static int texts_grow(void)
{
	size_t cap = textcap ? textcap * 2 : 1024;
	struct text_ent *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < textcap; i++) {
		size_t j;

		if (!texts_t[i].id)
			continue;
		for (j = texts_t[i].hash & (cap - 1); t[j].id; j = (j + 1) & (cap - 1))
			;
		t[j] = texts_t[i];
	}
	free(texts_t);
	texts_t = t;
	textcap = cap;
	return 0;
}

/* The id of a stack's text: found, or new and handed to emit. 0 when it
 * cannot be kept. Under the lock. */
static uint32_t text_id(const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	size_t j;

	if (textcap)
		for (j = h & (textcap - 1); texts_t[j].id; j = (j + 1) & (textcap - 1))
			if (texts_t[j].hash == h && texts_t[j].len == len &&
			    memcmp(texts + texts_t[j].at, s, len) == 0)
				return texts_t[j].id;
	if (next_id > GP_STK_MAX_STACKS || len > UINT32_MAX)
		return 0;
	if ((ntexts + 1) * 2 > textcap && texts_grow())
		return 0;
	if (reserve((void **)&texts, &textbytecap, ntextbytes + len, 1))
		return 0;
	if (emit(next_id, s, len) != 0)
		return 0;
	memcpy(texts + ntextbytes, s, len);
	for (j = h & (textcap - 1); texts_t[j].id; j = (j + 1) & (textcap - 1))
		;
	texts_t[j] = (struct text_ent){ .hash = h, .at = ntextbytes, .len = (uint32_t)len, .id = next_id };
	ntextbytes += len;
	ntexts++;
	counts.stacks++;
	return next_id++;
}

/* The id of a walk: known, or made from its text. Under the lock. */
static uint32_t walk_id(const struct raw *r, size_t n)
{
	uint64_t h = hash_raw(r, n);
	size_t j;
	char *text;
	size_t len;
	uint32_t id;

	if (keycap)
		for (j = h & (keycap - 1); keys[j].id; j = (j + 1) & (keycap - 1))
			if (keys[j].hash == h && same_walk(&keys[j], r, n))
				return keys[j].id;
	counts.new_keys++;
	text = text_of(r, n, &len);
	if (!text)
		return 0;
	id = text_id(text, len);
	free(text);
	if (!id)
		return 0;
	if ((nkeys + 1) * 2 > keycap && keys_grow())
		return id; /* not remembered: found again by its text next time */
	if (reserve((void **)&raws, &rawcap, nraws + n, sizeof(*raws)))
		return id;
	memcpy(raws + nraws, r, n * sizeof(*r));
	for (j = h & (keycap - 1); keys[j].id; j = (j + 1) & (keycap - 1))
		;
	keys[j] = (struct key_ent){ .hash = h, .at = nraws, .n = (uint32_t)n, .id = id };
	nraws += n;
	nkeys++;
	return id;
}

#endif /* GP_STK_CAN_READ */

int gp_stk_init(gp_ta_stack_fn fn, char *why, size_t cap)
{
#if GP_STK_CAN_READ
	pthread_mutex_lock(&lock);
	emit = fn;
	pthread_mutex_unlock(&lock);
	(void)why;
	(void)cap;
	return fn ? 0 : -EINVAL;
#else
	(void)fn;
	snprintf(why, cap, "%s", GP_STK_WHY);
	return -ENOTSUP;
#endif
}

uint32_t gp_stk_current(void)
{
#if GP_STK_CAN_READ
	struct raw r[MAX_KEPT];
	size_t n;
	uint32_t id;

	if (!emit)
		return 0;
	n = walk(r);
	if (!n)
		return 0;
	pthread_mutex_lock(&lock);
	counts.lookups++;
	id = walk_id(r, n);
	if (!id)
		counts.dropped++;
	pthread_mutex_unlock(&lock);
	return id;
#else
	return 0;
#endif
}

void gp_stk_get_counts(struct gp_stk_counts *out)
{
	pthread_mutex_lock(&lock);
	*out = counts;
	pthread_mutex_unlock(&lock);
}
