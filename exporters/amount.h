/* An amount as people type it on a command line: a size ("80GB",
 * "1.5GiB") or a share ("2%"). compare's and check's limits
 * (viewer/compare/) and the flight recorder's --dump-at (dump_when.h)
 * read it the same way. */
#ifndef GPUPROF_AMOUNT_H
#define GPUPROF_AMOUNT_H

#include <stdint.h>

/* "2%" or "256MiB": one of the two. */
struct gp_amount {
	int is_percent;
	double percent;
	uint64_t bytes;
	uint64_t decimal; /* the bytes of the decimal unit it was given in
			   * (10^9 for "80GB" and "80G"), 0 for a binary one */
};

/* The largest size an amount may say: 8 PiB, far beyond any GPU, and
 * still exact in a double. */
#define GP_AMOUNT_MAX_BYTES (UINT64_C(1) << 53)

/* Strict: digits, at most 3 decimals, then "%" or a unit: B; decimal kB
 * (or KB, k, K), MB (M), GB (G), TB (T), powers of 1000; binary KiB (Ki),
 * MiB (Mi), GiB (Gi), TiB (Ti), powers of 1024. No sign, no blanks, no
 * exponent, no other spelling ("256mb", "12g": megabits? Docker's binary g?).
 * Percentages up to 1000%, sizes up to GP_AMOUNT_MAX_BYTES; a fraction of a
 * byte ("1.5B") is refused, a binary unit's rounded down to the byte.
 * A bare number could be either, so only "0" (0 bytes) is taken without a
 * unit. Returns 0, -EINVAL (not of that form), -EDOM (a bare number other
 * than 0), -ERANGE (too large). */
int gp_parse_amount(const char *s, struct gp_amount *out);

#endif
