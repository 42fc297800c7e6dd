/* Growable buffer and JSON value encoders (see json_buf.h). */
#include "json_buf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static const char hex_digits[] = "0123456789abcdef";

/* Makes room for `extra` more bytes plus one spare byte, so gp_buf_cstr() can
 * always terminate without allocating (and without failing). */
static int reserve(struct gp_buf *b, size_t extra)
{
	size_t need, ncap;
	char *p;

	if (b->failed)
		return -1;
	if (extra > SIZE_MAX - 1 - b->len)
		goto fail;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (b->max_cap && ncap > b->max_cap) {
		if (need > b->max_cap)
			goto fail;
		ncap = b->max_cap;
	}
	p = realloc(b->data, ncap);
	if (!p)
		goto fail;
	b->data = p;
	b->cap = ncap;
	return 0;
fail:
	/* Sticky so that an event is either complete or known to be broken,
	 * never silently missing a piece in the middle. */
	b->failed = -ENOMEM;
	return -1;
}

void gp_buf_init(struct gp_buf *b, size_t max_cap)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->failed = 0;
	b->max_cap = max_cap;
}

void gp_buf_free(struct gp_buf *b)
{
	free(b->data);
	gp_buf_init(b, b->max_cap);
}

void gp_buf_reset(struct gp_buf *b)
{
	b->len = 0;
	b->failed = 0;
}

const char *gp_buf_cstr(struct gp_buf *b)
{
	if (!b->data && reserve(b, 0))
		return "";
	b->data[b->len] = '\0'; /* reserve() keeps cap > len */
	return b->data;
}

void gp_buf_append(struct gp_buf *b, const void *p, size_t n)
{
	if (n == 0 || reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void gp_buf_puts(struct gp_buf *b, const char *s)
{
	gp_buf_append(b, s, strlen(s));
}

void gp_buf_putc(struct gp_buf *b, char c)
{
	if (reserve(b, 1))
		return;
	b->data[b->len++] = c;
}

void gp_buf_json_str(struct gp_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + (s ? n : 0);
	const unsigned char *run;

	gp_buf_putc(b, '"');
	/* Bytes that need no change are copied in runs; only the exceptions
	 * (rare in practice) cost a separate append. */
	run = p;
	while (p < end) {
		unsigned char c = *p;
		int k = 0;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			p++;
			continue;
		}
		if (c >= 0x80) {
			k = gp_utf8_seq(p, (size_t)(end - p));
			if (k > 0) {
				p += k;
				continue;
			}
		}
		gp_buf_append(b, run, (size_t)(p - run));
		if (c == '"') {
			gp_buf_append(b, "\\\"", 2);
			p++;
		} else if (c == '\\') {
			gp_buf_append(b, "\\\\", 2);
			p++;
		} else if (c < 0x80) {
			/* C0 controls and DEL: \u00XX for all of them keeps the
			 * output plain ASCII-safe for any consumer. */
			char esc[6] = { '\\', 'u', '0', '0', hex_digits[c >> 4], hex_digits[c & 15] };

			gp_buf_append(b, esc, sizeof(esc));
			p++;
		} else {
			gp_buf_append(b, "\xEF\xBF\xBD", 3); /* U+FFFD */
			p += -k;
		}
		run = p;
	}
	gp_buf_append(b, run, (size_t)(p - run));
	gp_buf_putc(b, '"');
}

void gp_buf_json_cstr(struct gp_buf *b, const char *s)
{
	gp_buf_json_str(b, s, s ? strlen(s) : 0);
}

void gp_buf_u64(struct gp_buf *b, uint64_t v)
{
	char tmp[20]; /* UINT64_MAX has 20 digits */
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	gp_buf_append(b, tmp + i, sizeof(tmp) - i);
}

/* Magnitude as unsigned: -INT64_MIN does not fit in int64_t. */
static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

void gp_buf_i64(struct gp_buf *b, int64_t v)
{
	if (v < 0)
		gp_buf_putc(b, '-');
	gp_buf_u64(b, magnitude(v));
}

void gp_buf_ns_as_us(struct gp_buf *b, int64_t ns)
{
	uint64_t m = magnitude(ns);
	unsigned frac = (unsigned)(m % 1000);
	char tail[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
			 (char)('0' + frac % 10) };

	if (ns < 0)
		gp_buf_putc(b, '-');
	gp_buf_u64(b, m / 1000);
	gp_buf_append(b, tail, sizeof(tail));
}

void gp_buf_hex_str(struct gp_buf *b, uint64_t v)
{
	char tmp[2 + 16 + 2];
	size_t i = sizeof(tmp);

	tmp[--i] = '"';
	do {
		tmp[--i] = hex_digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	tmp[--i] = '"';
	gp_buf_append(b, tmp + i, sizeof(tmp) - i);
}

void gp_buf_double(struct gp_buf *b, double v)
{
	char tmp[40];
	char out[40];
	size_t o = 0;
	int n;

	if (!isfinite(v)) {
		gp_buf_append(b, "null", 4);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.17g", v);
	if (n <= 0 || (size_t)n >= sizeof(tmp)) {
		gp_buf_append(b, "null", 4);
		return;
	}
	/* We run inside foreign processes that may have called setlocale():
	 * the decimal point may then be "," or even several bytes. %.17g
	 * otherwise only produces digits, sign and exponent characters, so any
	 * other run of bytes is the decimal point. */
	for (int i = 0; i < n; i++) {
		char c = tmp[i];

		if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e')
			out[o++] = c;
		else if (o == 0 || out[o - 1] != '.')
			out[o++] = '.';
	}
	gp_buf_append(b, out, o);
}
