/* Escaping for the terminal (term.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/render/term.h"

/* A UTF-8 sequence's code point and length, 0 when it is not one (bad
 * lead, missing or bad continuation, overlong, surrogate, past U+10FFFF). */
static size_t utf8_at(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2, c = s[0] & 0x1F, min = 0x80;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3, c = s[0] & 0x0F, min = 0x800;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

static int bidi_control(uint32_t c)
{
	return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
	       (c >= 0x2066 && c <= 0x2069);
}

size_t gp_term_unsafe(const char *s, size_t n, char esc[GP_TERM_ESC_MAX])
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c;
	size_t len;

	if (!n)
		return 0;
	len = utf8_at(u, n, &c);
	if (!len) {
		snprintf(esc, GP_TERM_ESC_MAX, "\\x%02X", u[0]);
		return 1;
	}
	if (c < 0x20 || c == 0x7F) {
		snprintf(esc, GP_TERM_ESC_MAX, "\\x%02X", (unsigned)c);
		return len;
	}
	if ((c >= 0x80 && c <= 0x9F) || bidi_control(c)) {
		snprintf(esc, GP_TERM_ESC_MAX, "\\u%04X", (unsigned)c);
		return len;
	}
	return 0;
}

size_t gp_term_char_len(const char *s, size_t n)
{
	uint32_t cp;
	size_t len = n ? utf8_at((const unsigned char *)s, n, &cp) : 0;

	return len ? len : 1;
}

char *gp_term_escape(char *buf, size_t cap, const char *s)
{
	size_t n = 0, len;

	if (!cap)
		return buf;
	if (!s)
		s = "";
	len = strlen(s);
	for (size_t i = 0; i < len;) {
		char esc[GP_TERM_ESC_MAX];
		size_t k = gp_term_unsafe(s + i, len - i, esc);
		uint32_t cp;
		const char *put = esc;
		size_t put_len;

		if (k) {
			put_len = strlen(esc);
		} else {
			k = utf8_at((const unsigned char *)s + i, len - i, &cp);
			put = s + i;
			put_len = k;
		}
		if (n + put_len + 4 > cap) { /* room for "..." and the NUL */
			if (n + 4 <= cap) {
				memcpy(buf + n, "...", 3);
				n += 3;
			}
			break;
		}
		memcpy(buf + n, put, put_len);
		n += put_len;
		i += k;
	}
	buf[n] = '\0';
	return buf;
}

char *gp_term_escape_dup(const char *s)
{
	size_t cap = (s ? strlen(s) : 0) * 6 + 8; /* \xNN for one byte, \uNNNN for two */
	char *buf = malloc(cap);

	return buf ? gp_term_escape(buf, cap, s) : NULL;
}

const char *gp_term_str(const char *s)
{
	static char buf[GP_TERM_SLOTS][GP_TERM_BUF];
	static int k;

	if (!s)
		return NULL;
	k = (k + 1) % GP_TERM_SLOTS;
	return gp_term_escape(buf[k], sizeof(buf[k]), s);
}
