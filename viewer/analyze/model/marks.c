/* The marks a traced program's hooks leave (NVTX marks, AE_MARK): "step:N",
 * "gpuprof:torch {json}" (PyTorch's version and allocator settings),
 * gpuprof:torch.memory, .segment, .tensor, .param and .profiler. What a
 * mark says of the process is kept in it; what it says of memory goes to
 * memory.c. The names follow TRACE_FORMAT.md ("PyTorch programs"). */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/torch_marks.h"
#include "state.h"

/* "gpuprof:torch {json}": the PyTorch version and allocator settings. */
static int on_torch_info(struct an_analysis *a, struct an_proc *p, const char *json, size_t n)
{
	struct json_tokener *tok = json_tokener_new_ex(8);
	struct json_object *o, *v;
	int err = 0;

	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, json, (int)n);
	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return 0; /* not ours to judge: the mark is informational */
	}
#define TAKE(key, field)                                                                   \
	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)) { \
		an_str_unref(&a->st, p->field);                                            \
		p->field = an_str_intern(&a->st, json_object_get_string(v),               \
					 (size_t)json_object_get_string_len(v));           \
		if (!p->field)                                                             \
			err = -ENOMEM;                                                     \
	}
	TAKE("torch", torch_version)
	TAKE("alloc_conf", alloc_conf)
	TAKE("backend", backend)
	TAKE("tracker", hook_state)
#undef TAKE
	if (json_object_object_get_ex(o, "history", &v) && json_object_is_type(v, json_type_boolean))
		p->history_asked = json_object_get_boolean(v);
	if (p->alloc_conf && strcasestr(p->alloc_conf->s, "expandable_segments:true"))
		p->expandable_segments = 1;
	json_object_put(o);
	return err;
}

/* "gpuprof:torch.memory {json}": allocated/reserved as PyTorch counts them. */
static void on_torch_memory(struct an_analysis *a, struct an_proc *p, const char *json, size_t n,
			    int64_t ts)
{
	struct json_tokener *tok = json_tokener_new_ex(8);
	struct json_object *o, *v;
	int64_t alloc = -1, res = -1, dev = 0;

	if (!tok)
		return;
	o = json_tokener_parse_ex(tok, json, (int)n);
	json_tokener_free(tok);
	if (o && json_object_is_type(o, json_type_object)) {
		if (json_object_object_get_ex(o, "allocated", &v) && json_object_is_type(v, json_type_int))
			alloc = json_object_get_int64(v);
		if (json_object_object_get_ex(o, "reserved", &v) && json_object_is_type(v, json_type_int))
			res = json_object_get_int64(v);
		if (json_object_object_get_ex(o, "device", &v) && json_object_is_type(v, json_type_int))
			dev = json_object_get_int64(v);
		if (alloc >= 0 && res >= 0 && (uint64_t)alloc <= AN_MAX_BYTES &&
		    (uint64_t)res <= AN_MAX_BYTES && dev >= 0 && dev < AN_MAX_DEVICES)
			an_memory_torch_mem(a, p, (uint32_t)dev, (uint64_t)alloc, (uint64_t)res, ts);
	}
	json_object_put(o);
}

/* A mark's number, 1 to 16 digits of base 10 or 16, from s up to the next
 * space or end: the position after it, or NULL where there is none. */
static const char *mark_number(const char *s, const char *end, int base, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (; s < end && *s != ' '; s++, digits++) {
		char c = (char)(*s | 0x20);
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return NULL;
		if (digits >= 16)
			return NULL;
		v = v * (uint64_t)base + d;
	}
	if (!digits)
		return NULL;
	*out = v;
	return s;
}

/* "gpuprof:torch.tensor 0xADDR NBYTES LAYER": the tensor of NBYTES at ADDR
 * (live now) holds a parameter, or an optimizer's state of one, of the
 * module LAYER (as fwd: ranges name it); "gpuprof:torch.param ...": a
 * parameter gathered whole (param). What does not parse is no mark of the
 * hooks and is ignored. */
static int on_torch_tensor(struct an_analysis *a, struct an_proc *p, const char *s, size_t n,
			   int param)
{
	const char *end = s + n;
	uint64_t addr, nbytes;

	if (n < 2 || s[0] != '0' || s[1] != 'x')
		return 0;
	s = mark_number(s + 2, end, 16, &addr);
	if (!s || s >= end)
		return 0;
	s = mark_number(s + 1, end, 10, &nbytes);
	if (!s || s + 1 >= end)
		return 0;
	return an_memory_name_tensor(a, p, addr, nbytes, s + 1, (size_t)(end - s - 1), param);
}

int an_mark_event(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts)
{
	const struct an_str *n = ev->name;

	if (an_str_starts(n, "step:", 5)) {
		int64_t step = 0;
		const char *s = n->s + 5;

		if (!*s)
			return 0;
		for (; *s; s++) {
			if (*s < '0' || *s > '9' || step > 100000000)
				return 0; /* not a step mark of the hooks */
			step = step * 10 + (*s - '0');
		}
		if (step <= p->last_step)
			return 0;
		p->last_step = step;
		p->has_steps = 1;
		p->step_began = 0;
		p->last_step_ts = ts;
		return an_memory_step(a, p, ts);
	}
	if (an_str_starts(n, "gpuprof:torch ", 14)) {
		p->torch_seen = 1;
		return on_torch_info(a, p, n->s + 14, n->len - 14);
	}
	if (an_str_starts(n, GP_TORCH_MEMORY_PREFIX, sizeof(GP_TORCH_MEMORY_PREFIX) - 1)) {
		size_t k = sizeof(GP_TORCH_MEMORY_PREFIX) - 1;

		on_torch_memory(a, p, n->s + k, n->len - k, ts);
		return 0;
	}
	if (an_str_starts(n, "gpuprof:torch.segment 0x", 24)) {
		uint64_t addr;

		if (!mark_number(n->s + 24, n->s + n->len, 16, &addr))
			return 0;
		return gp_u64map_put(&p->named_segs, addr, (void *)1);
	}
	if (an_str_starts(n, GP_TORCH_TENSOR_PREFIX, sizeof(GP_TORCH_TENSOR_PREFIX) - 1))
		return on_torch_tensor(a, p, n->s + sizeof(GP_TORCH_TENSOR_PREFIX) - 1,
				       n->len - (sizeof(GP_TORCH_TENSOR_PREFIX) - 1), 0);
	if (an_str_starts(n, GP_TORCH_PARAM_PREFIX, sizeof(GP_TORCH_PARAM_PREFIX) - 1))
		return on_torch_tensor(a, p, n->s + sizeof(GP_TORCH_PARAM_PREFIX) - 1,
				       n->len - (sizeof(GP_TORCH_PARAM_PREFIX) - 1), 1);
	if (an_str_starts(n, "gpuprof:torch.profiler start", 28))
		p->profiler_windows++;
	return 0;
}
