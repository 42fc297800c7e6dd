/* json_buf: string escaping and UTF-8 repair, number encoders, buffer limits.
 * Every encoded string is parsed back with json-c (strict, UTF-8 validated)
 * and compared with the expected decoded value. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "json_buf.h"
#include "testutil.h"

#define FFFD "\xEF\xBF\xBD"

/* Encodes in[0..n) and checks it decodes (json-c) to want[0..wn). */
static void check_str(const char *in, size_t n, const char *want, size_t wn, int line)
{
	struct gp_buf b;
	struct json_object *o;

	gp_buf_init(&b, 0);
	gp_buf_json_str(&b, in, n);
	o = tu_parse(b.data, b.len);
	if (!o || !json_object_is_type(o, json_type_string) ||
	    (size_t)json_object_get_string_len(o) != wn ||
	    memcmp(json_object_get_string(o), want, wn) != 0) {
		CHECK_FAILED_("%s:%d (case at line %d): encoded \"%.*s\" does not decode as expected\n",
			      __FILE__, __LINE__, line, (int)b.len, gp_buf_cstr(&b));
	}
	check_count++;
	json_object_put(o);
	gp_buf_free(&b);
}

#define STR_CASE(in, want) check_str(in, sizeof(in) - 1, want, sizeof(want) - 1, __LINE__)

/* Encodes and compares the raw JSON text. */
static void check_raw(const char *in, size_t n, const char *want_json, int line)
{
	struct gp_buf b;

	gp_buf_init(&b, 0);
	gp_buf_json_str(&b, in, n);
	if (strcmp(gp_buf_cstr(&b), want_json) != 0)
		CHECK_FAILED_("%s:%d (case at line %d): got %s, want %s\n", __FILE__, __LINE__,
			      line, gp_buf_cstr(&b), want_json);
	check_count++;
	gp_buf_free(&b);
}

static void test_escapes(void)
{
	STR_CASE("plain", "plain");
	STR_CASE("", "");
	STR_CASE("a\"b", "a\"b");
	STR_CASE("a\\b", "a\\b");
	STR_CASE("\\\"\\\"", "\\\"\\\"");
	STR_CASE("</script>/", "</script>/");
	check_raw("a\"b\\c", 5, "\"a\\\"b\\\\c\"", __LINE__);

	/* Every C0 control and DEL: escaped as \u00XX, decodes to itself. */
	for (int c = 0; c <= 0x7f; c++) {
		char in[3] = { 'x', (char)c, 'y' };
		char want_json[16];

		if (c >= 0x20 && c != 0x7f)
			continue;
		check_str(in, 3, in, 3, __LINE__);
		snprintf(want_json, sizeof(want_json), "\"x\\u%04xy\"", c);
		check_raw(in, 3, want_json, __LINE__);
	}
	/* NULL writes "", n ignored */
	check_raw(NULL, 5, "\"\"", __LINE__);
	/* gp_buf_json_cstr stops at the NUL */
	{
		struct gp_buf b;

		gp_buf_init(&b, 0);
		gp_buf_json_cstr(&b, "ab\0cd");
		CHECK_STR(gp_buf_cstr(&b), "\"ab\"");
		gp_buf_reset(&b);
		gp_buf_json_cstr(&b, NULL);
		CHECK_STR(gp_buf_cstr(&b), "\"\"");
		gp_buf_free(&b);
	}
}

static void test_utf8(void)
{
	/* valid sequences, boundaries of each length class */
	STR_CASE("\xC2\x80", "\xC2\x80");                 /* U+0080 */
	STR_CASE("caf\xC3\xA9", "caf\xC3\xA9");
	STR_CASE("\xDF\xBF", "\xDF\xBF");                 /* U+07FF */
	STR_CASE("\xE0\xA0\x80", "\xE0\xA0\x80");         /* U+0800 */
	STR_CASE("\xE2\x82\xAC", "\xE2\x82\xAC");         /* euro */
	STR_CASE("\xED\x9F\xBF", "\xED\x9F\xBF");         /* U+D7FF */
	STR_CASE("\xEE\x80\x80", "\xEE\x80\x80");         /* U+E000 */
	STR_CASE("\xEF\xBF\xBF", "\xEF\xBF\xBF");         /* U+FFFF */
	STR_CASE("\xEF\xBF\xBD", "\xEF\xBF\xBD");         /* U+FFFD itself */
	STR_CASE("\xF0\x90\x80\x80", "\xF0\x90\x80\x80"); /* U+10000 */
	STR_CASE("\xF0\x9F\x98\x80!", "\xF0\x9F\x98\x80!");
	STR_CASE("\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"); /* U+10FFFF */
	check_raw("\xE2\x82\xAC", 3, "\"\xE2\x82\xAC\"", __LINE__); /* not \u-escaped */

	/* lone continuation bytes: one U+FFFD each */
	STR_CASE("\x80", FFFD);
	STR_CASE("a\x80" "b", "a" FFFD "b");
	STR_CASE("\x80\xBF\x80", FFFD FFFD FFFD);
	/* truncated sequences: the maximal subpart is one U+FFFD */
	STR_CASE("\xC3", FFFD);
	STR_CASE("\xE2\x82", FFFD);
	STR_CASE("\xE2\x82" "a", FFFD "a");
	STR_CASE("\xF0\x9F\x98", FFFD);
	STR_CASE("\xF0\x9F\x98" "\xF0\x9F\x98\x80", FFFD "\xF0\x9F\x98\x80");
	STR_CASE("\xE2" "\"", FFFD "\""); /* a quote ends the sequence, still escaped */
	STR_CASE("\xC3\x00", FFFD "\x00");
	/* overlongs */
	STR_CASE("\xC0\x80", FFFD FFFD);
	STR_CASE("\xC1\xBF", FFFD FFFD);
	STR_CASE("\xE0\x80\xAF", FFFD FFFD FFFD);
	STR_CASE("\xE0\x9F\xBF", FFFD FFFD FFFD);
	STR_CASE("\xF0\x80\x80\x80", FFFD FFFD FFFD FFFD);
	STR_CASE("\xF0\x8F\xBF\xBF", FFFD FFFD FFFD FFFD);
	/* UTF-16 surrogates encoded in UTF-8 */
	STR_CASE("\xED\xA0\x80", FFFD FFFD FFFD);
	STR_CASE("\xED\xBF\xBF", FFFD FFFD FFFD);
	STR_CASE("\xED\xA0\xBD\xED\xB8\x80", FFFD FFFD FFFD FFFD FFFD FFFD);
	/* beyond U+10FFFF and bytes that never occur */
	STR_CASE("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD);
	for (int c = 0xF5; c <= 0xFF; c++) {
		char in[4] = { 'a', (char)c, '\x80', 'b' };

		check_str(in, 4, "a" FFFD FFFD "b", 3 + 3 + 2, __LINE__);
		check_str(in + 1, 1, FFFD, 3, __LINE__);
	}
	STR_CASE("\xFE\xFF", FFFD FFFD);
}

static void append_cp(char *out, size_t *n, uint32_t cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xC0 | cp >> 6);
		out[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xE0 | cp >> 12);
		out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else {
		out[(*n)++] = (char)(0xF0 | cp >> 18);
		out[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3F));
		out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[(*n)++] = (char)(0x80 | (cp & 0x3F));
	}
}

static void test_fuzz(void)
{
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	struct gp_buf b;
	char in[256];
	int bad_random = 0, bad_valid = 0;

	gp_buf_init(&b, 0);
	/* Random bytes, biased towards the interesting ranges: always a valid
	 * JSON string with valid UTF-8. */
	for (int i = 0; i < 100000; i++) {
		size_t n = tu_rand(&seed) % 48;
		struct json_object *o;

		for (size_t j = 0; j < n; j++) {
			uint64_t r = tu_rand(&seed);

			switch (r % 4) {
			case 0: in[j] = (char)(r >> 8); break;               /* anything */
			case 1: in[j] = (char)(0x80 | (r >> 8 & 0x3F)); break; /* continuation */
			case 2: in[j] = (char)(0xC0 | (r >> 8 & 0x3F)); break; /* lead bytes */
			default: in[j] = (char)(r >> 8 & 0x7F); break;        /* ASCII incl. controls */
			}
		}
		gp_buf_reset(&b);
		gp_buf_json_str(&b, in, n);
		o = tu_parse(b.data, b.len);
		if (!o || !json_object_is_type(o, json_type_string))
			bad_random++;
		json_object_put(o);
	}
	CHECK_EQ_INT(bad_random, 0);

	/* Random valid UTF-8 (scalar values only): must come back unchanged. */
	for (int i = 0; i < 20000; i++) {
		size_t n = 0;
		struct json_object *o;

		while (n < sizeof(in) - 8 && tu_rand(&seed) % 16) {
			uint64_t r = tu_rand(&seed);
			uint32_t cp;

			switch (r % 4) {
			case 0: cp = (uint32_t)(r >> 8) % 0x80; break;
			case 1: cp = 0x80 + (uint32_t)(r >> 8) % 0x780; break;
			case 2: cp = 0x800 + (uint32_t)(r >> 8) % 0xF800; break;
			default: cp = 0x10000 + (uint32_t)(r >> 8) % 0x100000; break;
			}
			if (cp >= 0xD800 && cp <= 0xDFFF)
				cp = 0xFFFD;
			append_cp(in, &n, cp);
		}
		gp_buf_reset(&b);
		gp_buf_json_str(&b, in, n);
		o = tu_parse(b.data, b.len);
		if (!o || (size_t)json_object_get_string_len(o) != n ||
		    memcmp(json_object_get_string(o), in, n) != 0)
			bad_valid++;
		json_object_put(o);
	}
	CHECK_EQ_INT(bad_valid, 0);
	gp_buf_free(&b);
}

/* Encodes with f and compares the text. */
#define NUM_CASE(f, v, want)                                    \
	do {                                                    \
		struct gp_buf b_;                               \
		gp_buf_init(&b_, 0);                            \
		f(&b_, v);                                      \
		CHECK_STR(gp_buf_cstr(&b_), want);              \
		gp_buf_free(&b_);                               \
	} while (0)

/* The text must also be a JSON number json-c reads back as `want`. */
static void check_json_double(const char *text, double want)
{
	char arr[64];
	struct json_object *o, *e;

	snprintf(arr, sizeof(arr), "[%s]", text);
	o = tu_parse(arr, strlen(arr));
	e = o ? json_object_array_get_idx(o, 0) : NULL;
	CHECK(e != NULL);
	if (e)
		CHECK(json_object_get_double(e) == want);
	json_object_put(o);
}

static void test_numbers(void)
{
	NUM_CASE(gp_buf_u64, 0, "0");
	NUM_CASE(gp_buf_u64, 42, "42");
	NUM_CASE(gp_buf_u64, UINT64_MAX, "18446744073709551615");
	NUM_CASE(gp_buf_i64, 0, "0");
	NUM_CASE(gp_buf_i64, -1, "-1");
	NUM_CASE(gp_buf_i64, INT64_MAX, "9223372036854775807");
	NUM_CASE(gp_buf_i64, INT64_MIN, "-9223372036854775808");

	NUM_CASE(gp_buf_ns_as_us, 0, "0.000");
	NUM_CASE(gp_buf_ns_as_us, 1, "0.001");
	NUM_CASE(gp_buf_ns_as_us, 999, "0.999");
	NUM_CASE(gp_buf_ns_as_us, 1000, "1.000");
	NUM_CASE(gp_buf_ns_as_us, 1010, "1.010");
	NUM_CASE(gp_buf_ns_as_us, 1234567, "1234.567");
	NUM_CASE(gp_buf_ns_as_us, -1, "-0.001");
	NUM_CASE(gp_buf_ns_as_us, -1500, "-1.500");
	NUM_CASE(gp_buf_ns_as_us, INT64_MAX, "9223372036854775.807");
	NUM_CASE(gp_buf_ns_as_us, INT64_MIN, "-9223372036854775.808");
	NUM_CASE(gp_buf_ns_as_us, INT64_MIN + 1, "-9223372036854775.807");

	NUM_CASE(gp_buf_hex_str, 0, "\"0x0\"");
	NUM_CASE(gp_buf_hex_str, 0x1a2b, "\"0x1a2b\"");
	NUM_CASE(gp_buf_hex_str, 0x7f0000000000ull, "\"0x7f0000000000\"");
	NUM_CASE(gp_buf_hex_str, UINT64_MAX, "\"0xffffffffffffffff\"");

	NUM_CASE(gp_buf_double, NAN, "null");
	NUM_CASE(gp_buf_double, -NAN, "null");
	NUM_CASE(gp_buf_double, INFINITY, "null");
	NUM_CASE(gp_buf_double, -INFINITY, "null");
	NUM_CASE(gp_buf_double, 0.0, "0");
	NUM_CASE(gp_buf_double, 1.5, "1.5");
	NUM_CASE(gp_buf_double, -2.0, "-2");

	{
		const double vals[] = { 0.1, -0.1, 1.0 / 3.0, 1e300, -1e-300, 5e-324,
					1.7976931348623157e308, 123456789.125, -0.0 };

		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			struct gp_buf b;

			gp_buf_init(&b, 0);
			gp_buf_double(&b, vals[i]);
			check_json_double(gp_buf_cstr(&b), vals[i]); /* %.17g round-trips */
			gp_buf_free(&b);
		}
	}
	/* A host process with a "," decimal locale must not break the JSON. */
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
		NUM_CASE(gp_buf_double, 1.5, "1.5");
		setlocale(LC_NUMERIC, "C");
	} else {
		fprintf(stderr, "note: no comma-decimal locale installed, locale case skipped\n");
	}
}

static void test_buffer(void)
{
	struct gp_buf b;

	gp_buf_init(&b, 0);
	CHECK_STR(gp_buf_cstr(&b), ""); /* never appended: still a C string */
	gp_buf_puts(&b, "abc");
	gp_buf_putc(&b, 'd');
	gp_buf_append(&b, "ef", 2);
	gp_buf_append(&b, NULL, 0);
	CHECK_EQ_INT(b.len, 6);
	CHECK_STR(gp_buf_cstr(&b), "abcdef");
	CHECK_EQ_INT(b.len, 6); /* the NUL is not counted */
	gp_buf_reset(&b);
	CHECK_EQ_INT(b.len, 0);
	for (int i = 0; i < 100000; i++)
		gp_buf_putc(&b, (char)('a' + i % 26));
	CHECK_EQ_INT(b.len, 100000);
	CHECK(b.data[99999] == (char)('a' + 99999 % 26));
	CHECK_EQ_INT(b.failed, 0);
	gp_buf_free(&b);
	CHECK(b.data == NULL && b.len == 0);

	/* max_cap: a failed append keeps the old contents and sticks. */
	gp_buf_init(&b, 16);
	gp_buf_puts(&b, "0123456789");
	CHECK_EQ_INT(b.failed, 0);
	gp_buf_puts(&b, "0123456789");
	CHECK_EQ_INT(b.failed, -ENOMEM);
	CHECK_EQ_INT(b.len, 10);
	gp_buf_putc(&b, 'x'); /* would fit, but the buffer has failed */
	CHECK_EQ_INT(b.len, 10);
	CHECK_STR(gp_buf_cstr(&b), "0123456789");
	gp_buf_reset(&b);
	CHECK_EQ_INT(b.failed, 0);
	gp_buf_puts(&b, "012345678901234"); /* 15 + NUL = max_cap */
	CHECK_EQ_INT(b.failed, 0);
	CHECK_STR(gp_buf_cstr(&b), "012345678901234");
	gp_buf_putc(&b, 'x');
	CHECK_EQ_INT(b.failed, -ENOMEM);
	CHECK(b.cap <= 16);
	gp_buf_free(&b);

	/* A string that does not fit fails as a whole event would. */
	gp_buf_init(&b, 8);
	gp_buf_json_cstr(&b, "too long for eight");
	CHECK_EQ_INT(b.failed, -ENOMEM);
	gp_buf_free(&b);
}

int main(void)
{
	test_escapes();
	test_utf8();
	test_fuzz();
	test_numbers();
	test_buffer();
	return CHECK_DONE();
}
