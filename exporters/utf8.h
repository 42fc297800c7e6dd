/* UTF-8 well-formedness, shared by the encoder (json_buf.c) and the JSON
 * scanner (json_scan.h) so both agree on what is well-formed. Internal. */
#ifndef GPUPROF_UTF8_H
#define GPUPROF_UTF8_H

#include <stddef.h>

/* Classifies the sequence starting at p (n >= 1 bytes available).
 * > 0: length of a well-formed sequence (Unicode Table 3-7, so overlongs,
 *      surrogates and code points above U+10FFFF are not well-formed).
 * < 0: minus the length of the maximal ill-formed subpart: the caller emits one
 *      U+FFFD for it and resumes after it, the replacement policy Unicode
 *      recommends (and most decoders use), so our output matches theirs. */
static inline int gp_utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xBF;
	int need;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		need = 1;
	} else if (c == 0xE0) {
		need = 2;
		lo = 0xA0; /* below: overlong */
	} else if (c == 0xED) {
		need = 2;
		hi = 0x9F; /* above: UTF-16 surrogates */
	} else if (c >= 0xE1 && c <= 0xEF) {
		need = 2;
	} else if (c == 0xF0) {
		need = 3;
		lo = 0x90; /* below: overlong */
	} else if (c >= 0xF1 && c <= 0xF3) {
		need = 3;
	} else if (c == 0xF4) {
		need = 3;
		hi = 0x8F; /* above: beyond U+10FFFF */
	} else {
		return -1; /* continuation byte, C0/C1 (always overlong), F5..FF */
	}
	for (int i = 1; i <= need; i++) {
		if ((size_t)i >= n || p[i] < lo || p[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xBF;
	}
	return need + 1;
}

#endif
