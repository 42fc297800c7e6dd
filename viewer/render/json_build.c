/* See json_build.h. */
#include "viewer/render/json_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct json_object *gp_jb_chk(struct gp_jb *b, struct json_object *o)
{
	if (!o)
		b->oom = 1;
	return o;
}

struct json_object *gp_jb_obj(struct gp_jb *b)
{
	return gp_jb_chk(b, json_object_new_object());
}

struct json_object *gp_jb_arr(struct gp_jb *b)
{
	return gp_jb_chk(b, json_object_new_array());
}

struct json_object *gp_jb_int(struct gp_jb *b, int64_t v)
{
	return gp_jb_chk(b, json_object_new_int64(v));
}

struct json_object *gp_jb_bool(struct gp_jb *b, int v)
{
	return gp_jb_chk(b, json_object_new_boolean(v));
}

struct json_object *gp_jb_str(struct gp_jb *b, const char *s)
{
	return s ? gp_jb_chk(b, json_object_new_string(s)) : NULL;
}

struct json_object *gp_jb_num(struct gp_jb *b, double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	/* the value json-c keeps is the one written, so a reader of the
	 * object sees what the document says */
	return gp_jb_chk(b, json_object_new_double_s(strtod(buf, NULL), buf));
}

void gp_jb_put(struct gp_jb *b, struct json_object *o, const char *k, struct json_object *v)
{
	if (!o || json_object_object_add(o, k, v)) {
		json_object_put(v);
		if (o)
			b->oom = 1;
	}
}

void gp_jb_push(struct gp_jb *b, struct json_object *arr, struct json_object *v)
{
	if (!arr || json_object_array_add(arr, v)) {
		json_object_put(v);
		if (arr)
			b->oom = 1;
	}
}
