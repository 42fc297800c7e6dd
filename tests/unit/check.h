/* Minimal assertions for the unit tests: a failed CHECK prints file:line and
 * the expression, counts, and the test goes on; main() ends with
 * `return CHECK_DONE();`, non-zero if anything failed. */
#ifndef GPUPROF_TEST_CHECK_H
#define GPUPROF_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static long check_count;

/* Past this many, failures are still counted but no longer printed: a broken
 * loop over 100k inputs should not bury the first message. */
#define CHECK_MAX_PRINTED 50

#define CHECK_FAILED_(...)                                              \
	do {                                                            \
		if (check_failures++ < CHECK_MAX_PRINTED)               \
			fprintf(stderr, __VA_ARGS__);                   \
	} while (0)

#define CHECK(cond)                                                     \
	do {                                                            \
		check_count++;                                          \
		if (!(cond))                                            \
			CHECK_FAILED_("%s:%d: CHECK failed: %s\n",      \
				      __FILE__, __LINE__, #cond);       \
	} while (0)

#define CHECK_EQ_INT(a, b)                                              \
	do {                                                            \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
		check_count++;                                          \
		if (check_a_ != check_b_)                               \
			CHECK_FAILED_("%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
				      __FILE__, __LINE__, #a, #b, check_a_, check_b_); \
	} while (0)

#define CHECK_EQ_U64(a, b)                                              \
	do {                                                            \
		unsigned long long check_a_ = (a), check_b_ = (b);      \
		check_count++;                                          \
		if (check_a_ != check_b_)                               \
			CHECK_FAILED_("%s:%d: CHECK failed: %s == %s (%llu != %llu)\n", \
				      __FILE__, __LINE__, #a, #b, check_a_, check_b_); \
	} while (0)

#define CHECK_STR(a, b)                                                 \
	do {                                                            \
		const char *check_a_ = (a), *check_b_ = (b);            \
		check_count++;                                          \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) \
			CHECK_FAILED_("%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", \
				      __FILE__, __LINE__, #a, #b,       \
				      check_a_ ? check_a_ : "(null)",   \
				      check_b_ ? check_b_ : "(null)");  \
	} while (0)

#define CHECK_DONE()                                                    \
	(fprintf(stderr, "%s: %ld checks, %d failed\n", __FILE__,       \
		 check_count, check_failures),                          \
	 check_failures ? 1 : 0)

#endif
