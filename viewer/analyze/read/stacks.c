/* Python stacks of a trace, see stacks.h. A stack comes once per trace, so
 * json-c reads it: nothing here is in the hot loop. */
#include "stacks.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int contains(const char *s, size_t n, const char *what)
{
	size_t k = strlen(what);

	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(s + i, what, k))
			return 1;
	return 0;
}

int an_stack_file_is_user(const char *file, size_t n)
{
	const char *base = file;

	if (!n || file[0] == '<')
		return 0;
	if (contains(file, n, "/site-packages/") || contains(file, n, "/dist-packages/"))
		return 0;
	/* the standard library: .../lib/python3.12/x.py, lib64 too */
	if (contains(file, n, "/lib/python3") || contains(file, n, "/lib64/python3"))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (file[i] == '/')
			base = file + i + 1;
	if ((size_t)(file + n - base) > 8 && !memcmp(base, "gpuprof_", 8) &&
	    !memcmp(file + n - 3, ".py", 3))
		return 0;
	return 1;
}

static int bad(char *why, size_t cap, const char *what)
{
	snprintf(why, cap, "%s", what);
	return -EINVAL;
}

static void stack_free(struct an_stack *s, struct an_strtab *st)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		an_str_unref(st, s->f[i].file);
		an_str_unref(st, s->f[i].func);
	}
	an_str_unref(st, s->key);
	free(s);
}

/* The report's name of the stack's user frame, with the file's full path */
static int make_key(struct an_stack *s, struct an_strtab *st)
{
	const struct an_sframe *f;
	char buf[2 * AN_STR_MAX + 32];
	int n;

	if (s->user < 0)
		return 0;
	f = &s->f[s->user];
	n = snprintf(buf, sizeof(buf), "%s:%u in %s", f->file->s, f->line, f->func->s);
	s->key = an_str_intern_raw(st, buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	return s->key ? 0 : -ENOMEM;
}

int an_stacks_add(struct an_stacks *t, struct an_strtab *st, uint64_t id, const char *json, size_t n,
		  char *why, size_t whycap)
{
	struct json_tokener *tok;
	struct json_object *o;
	struct an_stack *s = NULL;
	size_t nf;
	int r = 0;

	if (!id || id >= AN_MAX_STACK_ID)
		return bad(why, whycap, "stack id out of range");
	if (id < t->cap && t->v[id])
		return bad(why, whycap, "stack id given twice");
	tok = json_tokener_new_ex(4);
	if (!tok)
		return -ENOMEM;
	o = n <= INT32_MAX ? json_tokener_parse_ex(tok, json, (int)n) : NULL;
	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_array)) {
		json_object_put(o);
		return bad(why, whycap, "frames is not an array");
	}
	nf = json_object_array_length(o);
	if (nf > AN_MAX_STACK_FRAMES) {
		r = bad(why, whycap, "more frames than a stack may have");
		goto out;
	}
	s = calloc(1, sizeof(*s) + nf * sizeof(s->f[0]));
	if (!s) {
		r = -ENOMEM;
		goto out;
	}
	s->user = -1;
	for (size_t i = 0; i < nf; i++) {
		struct json_object *fr = json_object_array_get_idx(o, i), *file, *line, *func;
		struct an_sframe *f = &s->f[i];
		int64_t ln;

		if (!json_object_is_type(fr, json_type_array) || json_object_array_length(fr) != 3) {
			r = bad(why, whycap, "a frame is not [file, line, function]");
			goto out;
		}
		file = json_object_array_get_idx(fr, 0);
		line = json_object_array_get_idx(fr, 1);
		func = json_object_array_get_idx(fr, 2);
		if (!json_object_is_type(file, json_type_string) || !json_object_is_type(func, json_type_string) ||
		    !json_object_is_type(line, json_type_int) || (ln = json_object_get_int64(line)) < 0 ||
		    ln > 100000000) {
			r = bad(why, whycap, "a frame is not [file, line, function]");
			goto out;
		}
		f->file = an_str_intern(st, json_object_get_string(file), (size_t)json_object_get_string_len(file));
		f->func = an_str_intern(st, json_object_get_string(func), (size_t)json_object_get_string_len(func));
		s->n++;
		if (!f->file || !f->func) {
			r = -ENOMEM;
			goto out;
		}
		f->line = (uint32_t)ln;
		f->user = ln > 0 && an_stack_file_is_user(f->file->s, f->file->len);
		if (f->user && s->user < 0)
			s->user = (int32_t)i;
	}
	if ((r = make_key(s, st)))
		goto out;
	if (id >= t->cap) {
		size_t cap = t->cap ? t->cap : 64;
		struct an_stack **v;

		while (cap <= id)
			cap *= 2;
		v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			r = -ENOMEM;
			goto out;
		}
		memset(v + t->cap, 0, (cap - t->cap) * sizeof(*v));
		t->v = v;
		t->cap = cap;
	}
	t->v[id] = s;
	t->n++;
	s = NULL;
out:
	stack_free(s, st);
	json_object_put(o);
	return r;
}

void an_stacks_free(struct an_stacks *t, struct an_strtab *st)
{
	for (size_t i = 0; i < t->cap; i++)
		stack_free(t->v[i], st);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
