/* Growable byte buffer with JSON value encoders.
 *
 * Every encoder appends valid JSON whatever the input: strings are escaped,
 * control characters become \u00XX, invalid UTF-8 bytes become U+FFFD.
 * On allocation failure the buffer keeps its old contents, sets `failed` and
 * ignores further appends, so callers check once at the end of an event. */
#ifndef GPUPROF_JSON_BUF_H
#define GPUPROF_JSON_BUF_H

#include <stddef.h>
#include <stdint.h>

struct gp_buf {
	char *data;     /* owned; not NUL-terminated unless gp_buf_cstr() is called */
	size_t len;
	size_t cap;
	int failed;     /* -ENOMEM once an append could not grow the buffer */
	size_t max_cap; /* 0 = unlimited; growth past it fails with -ENOMEM */
};

void gp_buf_init(struct gp_buf *b, size_t max_cap);
void gp_buf_free(struct gp_buf *b);
void gp_buf_reset(struct gp_buf *b); /* len = 0, failed = 0, keeps memory */
const char *gp_buf_cstr(struct gp_buf *b); /* NUL-terminates (not counted in len) */

void gp_buf_append(struct gp_buf *b, const void *p, size_t n);
void gp_buf_puts(struct gp_buf *b, const char *s); /* raw, unescaped */
void gp_buf_putc(struct gp_buf *b, char c);

/* "..." with escaping; s may be NULL (writes ""), n is a byte count. */
void gp_buf_json_str(struct gp_buf *b, const char *s, size_t n);
void gp_buf_json_cstr(struct gp_buf *b, const char *s);
void gp_buf_u64(struct gp_buf *b, uint64_t v);
void gp_buf_i64(struct gp_buf *b, int64_t v);
/* Nanoseconds written as microseconds with exactly three decimals, no
 * floating point: 1234567 -> 1234.567, -1500 -> -1.500 */
void gp_buf_ns_as_us(struct gp_buf *b, int64_t ns);
/* "0x1a2b" as a JSON string (addresses exceed 2^53, so never a JSON number) */
void gp_buf_hex_str(struct gp_buf *b, uint64_t v);
/* finite doubles with %.17g semantics; NaN/Inf written as null */
void gp_buf_double(struct gp_buf *b, double v);

#endif
