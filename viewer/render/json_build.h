/* Building a JSON document with json-c when any allocation may fail: the
 * machine-readable reports (analyze --json, compare and check --format json)
 * build their documents with these. json-c returns NULL when out of memory,
 * and json_object_object_add takes NULL as JSON null, so a failure is
 * remembered in the builder (oom), never dereferenced: the renderer checks
 * b->oom once, at the end, instead of after every call.
 *
 * Ownership: gp_jb_put and gp_jb_push take v, also when they fail or the
 * container is NULL (then v is freed). */
#ifndef GPUPROF_RENDER_JSON_BUILD_H
#define GPUPROF_RENDER_JSON_BUILD_H

#include <json-c/json.h>
#include <stdint.h>

struct gp_jb {
	int oom; /* an allocation failed: the document is not whole */
};

/* o, remembering a NULL as a failure */
struct json_object *gp_jb_chk(struct gp_jb *b, struct json_object *o);
struct json_object *gp_jb_obj(struct gp_jb *b);
struct json_object *gp_jb_arr(struct gp_jb *b);
struct json_object *gp_jb_int(struct gp_jb *b, int64_t v);
struct json_object *gp_jb_bool(struct gp_jb *b, int v);
/* NULL (JSON null) for a NULL string */
struct json_object *gp_jb_str(struct gp_jb *b, const char *s);
/* v written with that many decimals, the same bytes every run (goldens and
 * diffs); JSON null when v is not finite */
struct json_object *gp_jb_num(struct gp_jb *b, double v, int decimals);
void gp_jb_put(struct gp_jb *b, struct json_object *o, const char *k, struct json_object *v);
void gp_jb_push(struct gp_jb *b, struct json_object *arr, struct json_object *v);

#endif
