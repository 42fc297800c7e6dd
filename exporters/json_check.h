/* Strict validation and light inspection of one JSON object held in memory,
 * for reading back untrusted trace lines (trace_recover.c). Internal. */
#ifndef GPUPROF_JSON_CHECK_H
#define GPUPROF_JSON_CHECK_H

#include <stddef.h>

/* 1 if p[0..n) is exactly one JSON object (RFC 8259, strings well-formed
 * UTF-8, nesting at most GP_JSON_MAX_DEPTH), surrounding whitespace allowed;
 * else 0. */
#define GP_JSON_MAX_DEPTH 64
int gp_json_is_object(const char *p, size_t n);

/* For an object that passed gp_json_is_object(): finds the top-level member
 * `key` (matched byte for byte against the raw, still-escaped key) and points
 * *v and *vn at its raw value text (strings keep their quotes). 1 if found. */
int gp_json_top_member(const char *p, size_t n, const char *key,
		       const char **v, size_t *vn);

#endif
