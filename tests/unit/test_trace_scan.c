/* trace_scan: the line scanner's guesses of the next member name (learned
 * from the lines before) never change what it finds. Every line of a set
 * (members in other orders, names that begin other names, blanks around the
 * colon, escaped names, names the format does not have or has too long to
 * guess, members near the line's end, every cut of each line) is scanned
 * once by a scanner that has read all the lines before it and once by a
 * fresh one: the same result, members and message. And the conversions'
 * limits: integers of 19 and 20 digits, times of 15 and 16. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_scan.h"

static const char *const lines[] = {
	"{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":31337,"
	"\"tid\":31400,\"ts\":74402.000,\"dur\":4.000,\"args\":{\"corr\":2284}}",
	"{\"ph\":\"i\",\"name\":\"alloc\",\"cat\":\"memory\",\"pid\":1003133700,\"tid\":7,"
	"\"ts\":852169.500,\"s\":\"t\",\"args\":{\"addr\":\"0x7f0070000000\",\"bytes\":8388608,"
	"\"kind\":\"device\",\"device\":0,\"stream\":7,\"corr\":24997,\"async\":true,"
	"\"pool\":\"0x5ab0\",\"pool_type\":\"local\",\"pool_size\":1241513984,"
	"\"pool_used\":780140544}}",
	/* a name that differs from the guess only in its second word:
	 * "pool_type", guessed after "pool" */
	"{\"ph\":\"i\",\"name\":\"alloc\",\"cat\":\"memory\",\"pid\":1,\"tid\":7,\"ts\":1.0,"
	"\"args\":{\"addr\":\"0x10\",\"bytes\":1,\"kind\":\"device\",\"device\":0,\"stream\":7,"
	"\"corr\":5,\"async\":true,\"pool\":\"0x1\",\"pool_typo\":\"local\",\"pool_size\":4,"
	"\"pool_used\":2}}",
	/* the same members, other orders: each guess from the line before fails */
	"{\"name\":\"alloc\",\"ph\":\"i\",\"pid\":1003133700,\"cat\":\"memory\",\"ts\":852169.500,"
	"\"tid\":7,\"args\":{\"bytes\":8388608,\"addr\":\"0x7f0070000000\",\"pool_type\":\"local\","
	"\"pool\":\"0x5ab0\",\"pool_used\":780140544,\"pool_size\":1241513984,\"kind\":\"device\"},"
	"\"s\":\"t\"}",
	/* a name that begins the guessed one, and the other way round */
	"{\"ph\":\"i\",\"name\":\"alloc\",\"cat\":\"memory\",\"pid\":1,\"tid\":7,\"ts\":1.0,"
	"\"args\":{\"addr\":\"0x10\",\"bytes\":1,\"kind\":\"device\",\"device\":0,\"pool\":\"0x1\","
	"\"pool_size\":4,\"pool_type\":\"local\",\"pool_used\":2}}",
	"{\"ph\":\"i\",\"name\":\"alloc\",\"cat\":\"memory\",\"pid\":1,\"tid\":7,\"ts\":1.0,"
	"\"args\":{\"addr\":\"0x10\",\"bytes\":1,\"kind\":\"device\",\"device\":0,\"pool_type\":"
	"\"local\",\"pool\":\"0x1\",\"pool_size\":4,\"pool_used\":2,\"poo\":1,\"pools\":2}}",
	/* and in its third: "local_world_size", guessed after "local_rank" */
	"{\"ph\":\"i\",\"name\":\"gpuprof.meta\",\"cat\":\"gpuprof\",\"pid\":7,\"tid\":0,\"ts\":0.0,"
	"\"args\":{\"format\":1,\"rank\":0,\"local_rank\":0,\"local_world_size\":2,"
	"\"job_start_unix_ns\":5,\"world_size\":2}}",
	"{\"ph\":\"i\",\"name\":\"gpuprof.meta\",\"cat\":\"gpuprof\",\"pid\":7,\"tid\":0,\"ts\":0.0,"
	"\"args\":{\"format\":1,\"rank\":0,\"local_rank\":0,\"local_world_sizf\":2,"
	"\"job_start_unix_nt\":5,\"world_size\":2}}",
	/* blanks around the colons and commas */
	"{ \"ph\" : \"X\" , \"name\":\"cudaLaunchKernel\" ,\"cat\" :\"cuda_runtime\",\"pid\": 31337,"
	"\"tid\":\t31400,\"ts\":74402.000,\"dur\":4.000,\"args\": { \"corr\" : 2284 } }",
	/* escaped names: no guess, and the format's lookup refuses them */
	"{\"ph\":\"X\",\"n\\u0061me\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":31337,"
	"\"tid\":31400,\"ts\":74402.000,\"dur\":4.000,\"args\":{\"c\\u006frr\":2284}}",
	"{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":31337,"
	"\"tid\":31400,\"ts\":74402.000,\"dur\":4.000,\"args\":{\"corr\":2284}}",
	/* names the format does not have, one longer than a guess holds */
	"{\"ph\":\"i\",\"name\":\"gpuprof.stats\",\"cat\":\"gpuprof\",\"pid\":1,\"tid\":0,\"ts\":0.0,"
	"\"s\":\"g\",\"args\":{\"skipped_memory_records\":3,\"not_in_the_format\":[1,{\"a\":2}],"
	"\"skipped_memory_records\":4,\"zz\":null}}",
	"{\"ph\":\"i\",\"name\":\"gpuprof.stats\",\"cat\":\"gpuprof\",\"pid\":1,\"tid\":0,\"ts\":0.0,"
	"\"s\":\"g\",\"args\":{\"skipped_memory_records\":3,\"not_in_the_format\":[1,{\"a\":2}],"
	"\"skipped_memory_records\":4,\"zz\":null}}",
	/* members a few bytes from the end, and an empty args */
	"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":3}",
	"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":3,\"args\":{}}",
	"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":3,\"args\":{ }}",
	/* ignored events, then one that is not */
	"{\"ph\":\"C\",\"name\":\"GPU memory\",\"cat\":\"memory\",\"pid\":1,\"tid\":0,\"ts\":1.0,"
	"\"args\":{\"device\":1,\"pool_reserved\":2}}",
	"{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":1,\"tid\":7,\"ts\":1.0,\"dur\":1.0,"
	"\"args\":{\"corr\":1,\"grid\":[1,1,1]}}",
	"{\"ph\":\"X\",\"name\":\"ncclKernel\",\"cat\":\"kernel\",\"pid\":1,\"tid\":7,\"ts\":1.0,"
	"\"dur\":1.0,\"args\":{\"corr\":1,\"grid\":[1,1,1]}}",
	/* a member twice: the last one counts, guessed or not */
	"{\"ph\":\"B\",\"ph\":\"E\",\"pid\":1,\"pid\":2,\"tid\":2,\"ts\":3}",
	/* damage after a guessed name */
	"{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":-,"
	"\"tid\":31400}",
	"{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":31337"
	"\"tid\":31400}",
	"{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":31337,"
	"\"tid\":31400,}",
};

struct result {
	int rc;
	const char *why;
	struct gp_tr_members m;
};

static void scan(struct gp_tr_members *m, const char *p, size_t n, struct result *r)
{
	r->why = NULL;
	r->rc = gp_tr_scan_line(p, n, m, &r->why);
	r->m = *m;
}

static int same_val(const struct gp_json_val *a, const struct gp_json_val *b)
{
	if (a->type != b->type)
		return 0;
	if (a->type == GP_JSON_NONE || a->type == GP_JSON_OBJ)
		return 1; /* an args object's text is not kept */
	return a->p == b->p && a->n == b->n && a->esc == b->esc && a->num == b->num;
}

/* What a line gave a scanner that has guesses and a fresh one. */
static void check_same(const struct result *a, const struct result *b, const char *line, size_t n)
{
	int ok = a->rc == b->rc && (a->rc == 0 || strcmp(a->why, b->why) == 0);

	if (a->rc == 0) {
		ok = ok && a->m.top_set == b->m.top_set && a->m.args_set[0] == b->m.args_set[0] && a->m.args_set[1] == b->m.args_set[1] &&
		     a->m.ignored == b->m.ignored;
		for (int i = 0; ok && i < TK_N; i++)
			ok = same_val(&a->m.top[i], &b->m.top[i]);
		for (int i = 0; ok && i < AK_N; i++)
			ok = same_val(&a->m.args[i], &b->m.args[i]);
	}
	CHECK(ok);
	if (!ok)
		fprintf(stderr, "  differs: %.*s (rc %d/%d: %s / %s)\n", (int)n, line, a->rc, b->rc,
			a->rc ? a->why : "", b->rc ? b->why : "");
}

/* After a line that failed, one with few members: what the failed line
 * set half is gone. */
static void check_after_failure(struct gp_tr_members *taught, int skip)
{
	static const char probe[] = "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":3}";
	struct gp_tr_members *fresh = calloc(1, sizeof(*fresh));
	struct result a, b;

	fresh->skip_ignored = skip;
	scan(taught, probe, sizeof(probe) - 1, &a);
	scan(fresh, probe, sizeof(probe) - 1, &b);
	check_same(&a, &b, probe, sizeof(probe) - 1);
	free(fresh);
}

/* Each line whole, then cut at every length, in order, twice over (the
 * second time the first line's guesses are the set's last), with
 * skip_ignored off and on. */
static void test_guesses(void)
{
	size_t nlines = sizeof(lines) / sizeof(lines[0]);

	for (int skip = 0; skip <= 1; skip++) {
		struct gp_tr_members *taught = calloc(1, sizeof(*taught));
		struct gp_tr_members *fresh = malloc(sizeof(*fresh));
		struct result a, b;

		taught->skip_ignored = skip;
		for (int round = 0; round < 2; round++) {
			for (size_t i = 0; i < nlines; i++) {
				size_t len = strlen(lines[i]);
				/* a copy of its own length: a read past the end is
				 * AddressSanitizer's to find */
				char *line = malloc(len);

				memcpy(line, lines[i], len);
				/* whole first, while the guesses are the line
				 * before's; then its cuts */
				for (size_t k = 0; k <= len; k++) {
					size_t n = k ? k : len;

					memset(fresh, 0, sizeof(*fresh));
					fresh->skip_ignored = skip;
					scan(taught, line, n, &a);
					scan(fresh, line, n, &b);
					check_same(&a, &b, line, n);
					if (a.rc) /* nothing of it left for the next */
						check_after_failure(taught, skip);
				}
				free(line);
			}
		}
		free(taught);
		free(fresh);
	}
}

/* The guessed members hold what the line says. */
static void test_values(void)
{
	struct gp_tr_members *m = calloc(1, sizeof(*m));
	const char *why = NULL;
	uint64_t u;
	int64_t ns;

	for (int round = 0; round < 3; round++) {
		const char *line = lines[1];

		CHECK_EQ_INT(gp_tr_scan_line(line, strlen(line), m, &why), 0);
		CHECK(GP_JV_IS(&m->top[TK_PH], "i") && GP_JV_IS(&m->top[TK_CAT], "memory"));
		CHECK(gp_jv_u64(&m->args[AK_BYTES], &u) == 0 && u == 8388608);
		CHECK(gp_jv_u64(&m->args[AK_POOL_SIZE], &u) == 0 && u == 1241513984);
		CHECK(gp_jv_hex(&m->args[AK_POOL], &u) == 0 && u == 0x5ab0);
		CHECK(GP_JV_IS(&m->args[AK_POOL_TYPE], "local"));
		CHECK(gp_jv_us_to_ns(&m->top[TK_TS], &ns) == 0 && ns == 852169500);
		CHECK(m->top[TK_DUR].type == GP_JSON_NONE);
	}
	free(m);
}

/* text scanned as a number, whole */
static struct gp_json_val num(const char *text)
{
	struct gp_json_cur c = { (const unsigned char *)text,
				  (const unsigned char *)text + strlen(text), NULL, 1, 4096 };
	struct gp_json_val v;

	CHECK_EQ_INT(gp_json_number(&c, &v), 0);
	CHECK(c.p == c.end);
	return v;
}

static void test_limits(void)
{
	struct gp_json_val v;
	uint64_t u;
	int64_t ns;

	v = num("9999999999999999999"); /* 19 digits */
	CHECK(gp_jv_u64(&v, &u) == 0 && u == 9999999999999999999ull);
	v = num("18446744073709551615");
	CHECK(gp_jv_u64(&v, &u) == 0 && u == UINT64_MAX);
	v = num("18446744073709551616");
	CHECK(gp_jv_u64(&v, &u) == -EINVAL);
	v = num("99999999999999999999");
	CHECK(gp_jv_u64(&v, &u) == -EINVAL);
	v = num("0");
	CHECK(gp_jv_u64(&v, &u) == 0 && u == 0);
	v = num("999999999999999.999"); /* 15 digits before the point */
	CHECK(gp_jv_us_to_ns(&v, &ns) == 0 && ns == 999999999999999999ll);
	v = num("-999999999999999.5");
	CHECK(gp_jv_us_to_ns(&v, &ns) == 0 && ns == -999999999999999500ll);
	v = num("1000000000000000");
	CHECK(gp_jv_us_to_ns(&v, &ns) == -EINVAL);
	v = num("99999999999999999999999.0"); /* would wrap a 64-bit sum */
	CHECK(gp_jv_us_to_ns(&v, &ns) == -EINVAL);
	v = num("12.3456");
	CHECK(gp_jv_us_to_ns(&v, &ns) == 0 && ns == 12345);
	v = num("7");
	CHECK(gp_jv_us_to_ns(&v, &ns) == 0 && ns == 7000);
	v = num("1.5e3");
	CHECK(gp_jv_us_to_ns(&v, &ns) == 0 && ns == 1500000);
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The values a scan gives numbers against digit-by-digit arithmetic: every
 * count of digits before the point from 1 to 24 (the scan's word, two
 * words, a digit at a time, and past what a uint64_t holds), with and
 * without a sign and 1 to 5 decimals (the writer's 3 taken at once), the
 * number ending the text or followed by more. */
static void test_conversions(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (int round = 0; round < 4000; round++) {
		char text[64];
		int whole = 1 + round % 24, neg = round / 24 % 2, frac = round / 48 % 6;
		int tail = round / 288 % 2, n = 0;
		unsigned __int128 ref = 0;
		struct gp_json_val v;
		uint64_t u = 0; /* 0 where a conversion that should succeed fails */
		int64_t i = 0, ns = 0;

		if (neg)
			text[n++] = '-';
		for (int d = 0; d < whole; d++) {
			/* the first digit 1-9, some runs of nines (the edges) */
			int digit = d == 0 ? 1 + (int)(next_rand(&seed) % 9)
				  : round % 7 == 0 ? 9 : (int)(next_rand(&seed) % 10);

			if (whole == 1 && round % 5 == 0)
				digit = 0;
			text[n++] = (char)('0' + digit);
			ref = ref * 10 + (unsigned)digit;
			if (ref > (unsigned __int128)1 << 100)
				ref = (unsigned __int128)1 << 100; /* past any limit, stays there */
		}
		int frac_at = n;
		if (frac) {
			text[n++] = '.';
			for (int d = 0; d < frac; d++)
				text[n++] = (char)('0' + next_rand(&seed) % 10);
		}
		int len = n;
		if (tail) {
			memcpy(text + n, ",\"x\":1}         ", 17);
			n += 17;
		}
		text[n] = '\0';
		{
			struct gp_json_cur c = { (const unsigned char *)text,
						  (const unsigned char *)text + n, NULL, 1, 4096 };

			CHECK_EQ_INT(gp_json_number(&c, &v), 0);
			CHECK(c.p == (const unsigned char *)text + len);
		}
		if (!neg && !frac) {
			int ok = ref <= UINT64_MAX;

			CHECK_EQ_INT(gp_jv_u64(&v, &u) == 0, ok);
			if (ok)
				CHECK(u == (uint64_t)ref);
		} else {
			CHECK(gp_jv_u64(&v, &u) == -EINVAL);
		}
		if (!frac) {
			int ok = ref <= (unsigned __int128)INT64_MAX;

			CHECK_EQ_INT(gp_jv_i64(&v, &i) == 0, ok);
			if (ok)
				CHECK(i == (neg ? -(int64_t)ref : (int64_t)ref));
		}
		{
			int ok = whole <= 15;
			/* 15 digits at most: 10^15 * 1000 fits */
			int64_t want = ok ? (int64_t)ref * 1000 : 0;

			for (int d = 0; d < 3; d++) {
				int digit = d < frac ? text[frac_at + 1 + d] - '0' : 0;

				want += digit * (d == 0 ? 100 : d == 1 ? 10 : 1);
			}
			CHECK_EQ_INT(gp_jv_us_to_ns(&v, &ns) == 0, ok);
			if (ok)
				CHECK(ns == (neg ? -want : want));
		}
		if (tail) /* under the same value, no word read past the end */
			CHECK(v.n == (uint32_t)len);
	}
}

/* A number's text that the scanner never gives (a byte no digit) as v: the
 * conversions refuse it, whichever path they take. */
static void test_not_digits(void)
{
	for (size_t n = 1; n <= 20; n++) {
		for (size_t at = 0; at < n; at++) {
			static const char odd[] = { '/', ':', '.', 'a', ' ', '\x10', '\x3a', '\xff' };

			for (size_t k = 0; k < sizeof(odd); k++) {
				char text[24];
				struct gp_json_val v = { .p = text, .n = (uint32_t)n, .type = GP_JSON_NUM };
				uint64_t u;

				memset(text, '7', n);
				text[at] = odd[k];
				CHECK(gp_jv_u64(&v, &u) == -EINVAL);
			}
		}
	}
}

/* "0x" and 1 to 16 hex digits, either case, against a digit at a time; a
 * byte no hex digit at each place (those next to the digits' and letters'
 * ranges, and those that look like one with bit 5 set or cleared) and a
 * 17th digit refused. */
static void test_hex(void)
{
	static const char digits[] = "0123456789abcdefABCDEF";
	static const char odd[] = { '/', ':', '@', 'G', '`', 'g', 'x', ' ', '\x10', '\x19',
				    '\x1a', '\xc6', '\xff', '\0' };
	uint64_t seed = 0x243f6a8885a308d3ull;

	for (int round = 0; round < 2000; round++) {
		size_t h = 1 + (size_t)round % 17;
		char text[24];
		struct gp_json_val v = { .p = text, .n = (uint32_t)(h + 2), .type = GP_JSON_STR };
		uint64_t want = 0, u;

		text[0] = '0';
		text[1] = round % 3 ? 'x' : 'X';
		for (size_t i = 0; i < h; i++) {
			char ch = digits[next_rand(&seed) % (sizeof(digits) - 1)];

			text[2 + i] = ch;
			want = want * 16 + (uint64_t)(ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
		}
		if (h > 16) {
			CHECK(gp_jv_hex(&v, &u) == -EINVAL);
			continue;
		}
		CHECK(gp_jv_hex(&v, &u) == 0 && u == want);
		{
			size_t at = 2 + (size_t)round / 17 % h;
			char was = text[at];

			text[at] = odd[(size_t)round / 7 % sizeof(odd)];
			CHECK(gp_jv_hex(&v, &u) == -EINVAL);
			text[at] = was;
		}
	}
}

/* Numbers at the edges of the grammar, each alone and with 16 bytes and
 * more after it (where digits are found 16 bytes at a step): where the
 * scan ends, or that it fails, and the flags. */
static void test_number_edges(void)
{
	static const struct {
		const char *text;
		int ok, len, num;
	} cases[] = {
		{ "0", 1, 1, 0 },
		{ "01", 1, 1, 0 }, /* "0", then a byte the caller refuses */
		{ "0.5", 1, 3, GP_JSON_FRAC },
		{ "00.5", 1, 1, 0 },
		{ "1.", 0, 0, 0 },
		{ "1.x", 0, 0, 0 },
		{ "1e", 0, 0, 0 },
		{ "1e5", 1, 3, GP_JSON_EXP },
		{ "1E+5", 1, 4, GP_JSON_EXP },
		{ "1.5e-3", 1, 6, GP_JSON_FRAC | GP_JSON_EXP },
		{ "1.e5", 0, 0, 0 },
		{ "-", 0, 0, 0 },
		{ "-0", 1, 2, GP_JSON_NEG },
		{ "-12.5", 1, 5, GP_JSON_NEG | GP_JSON_FRAC },
		{ "123456789012345", 1, 15, 0 },
		{ "1234567890123456", 1, 16, 0 },
		{ "12345678901234567", 1, 17, 0 },
		{ "12345678901234.5", 1, 16, GP_JSON_FRAC },
		{ "1234567890123.45", 1, 16, GP_JSON_FRAC },
		{ "123456789012.345", 1, 16, GP_JSON_FRAC },
		{ "1.23456789012345", 1, 16, GP_JSON_FRAC },
		{ "1.2345678901234", 1, 15, GP_JSON_FRAC },
		{ "7.", 0, 0, 0 },
		{ "7.0.1", 1, 3, GP_JSON_FRAC },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int tail = 0; tail <= 1; tail++) {
			char text[64];
			size_t n = strlen(cases[i].text);
			struct gp_json_cur c;
			struct gp_json_val v;
			int rc;

			memcpy(text, cases[i].text, n);
			if (tail) {
				memcpy(text + n, "}                ", 17);
				n += 17;
			}
			c = (struct gp_json_cur){ (const unsigned char *)text,
						  (const unsigned char *)text + n, NULL, 1, 4096 };
			rc = gp_json_number(&c, &v);
			CHECK_EQ_INT(rc == 0, cases[i].ok);
			if (rc == 0 && cases[i].ok) {
				CHECK_EQ_INT((int)v.n, cases[i].len);
				CHECK_EQ_INT(v.num, cases[i].num);
				CHECK(c.p == (const unsigned char *)text + cases[i].len);
			}
			if ((rc == 0) != cases[i].ok)
				fprintf(stderr, "  %s (tail %d): rc %d\n", cases[i].text, tail, rc);
		}
	}
}

int main(void)
{
	test_guesses();
	test_values();
	test_limits();
	test_conversions();
	test_not_digits();
	test_hex();
	test_number_edges();
	return CHECK_DONE();
}
