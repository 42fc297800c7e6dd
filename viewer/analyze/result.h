/* The result of an analysis as a JSON document (schema in SCHEMA.md): what
 * --json prints, and what the text report (text.c) is rendered from, so
 * both always say the same. */
#ifndef GPUPROF_AN_RESULT_H
#define GPUPROF_AN_RESULT_H

#include <json-c/json.h>

#include "state.h"

/* A new document, or NULL when out of memory. */
struct json_object *an_result_build(struct an_analysis *a);

/* text.c: the human report of a document from an_result_build(). */
int an_text_render(struct json_object *doc, FILE *out, int color, int top);

#endif
