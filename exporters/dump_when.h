/* When the flight recorder writes a dump besides the end, SIGUSR1 and
 * out-of-memory errors: the settings --dump-at and --dump-steps give
 * (GPUPROF_DUMP_AT, GPUPROF_DUMP_STEPS), read the same by the launcher,
 * which checks them, and by the recorder. */
#ifndef GPUPROF_DUMP_WHEN_H
#define GPUPROF_DUMP_WHEN_H

#include <errno.h>
#include <stdint.h>

#include "amount.h"

/* The flight recorder's window where none is asked for: --dump-at and
 * --dump-steps without --window, and the default trace past its cap */
#define GP_FLIGHT_DEFAULT_WINDOW_S 60

/* The default trace's size cap (GPUPROF_TRACE_CAP, --trace-cap): unset,
 * this; smaller than the minimum, refused (a trace's meta and first
 * events alone take some kilobytes) */
#define GP_TRACE_CAP_DEFAULT_BYTES (UINT64_C(1) << 30)
#define GP_TRACE_CAP_MIN_BYTES (UINT64_C(64) << 10)

/* "off" or "0": no cap (*bytes 0); else a size (amount.h) of at least
 * GP_TRACE_CAP_MIN_BYTES. 0 or -EINVAL. */
static inline int gp_parse_trace_cap(const char *s, uint64_t *bytes)
{
	struct gp_amount a;

	*bytes = 0;
	if (s[0] == 'o' && s[1] == 'f' && s[2] == 'f' && !s[3])
		return 0;
	if (gp_parse_amount(s, &a) != 0 || a.is_percent || (a.bytes && a.bytes < GP_TRACE_CAP_MIN_BYTES))
		return -EINVAL;
	*bytes = a.bytes;
	return 0;
}

/* An amount (amount.h): a size, or a share of the device up to 100%
 * (87.5%: 875 permille; a finer share rounds to the permille). Into *bytes
 * (the other 0) or *permille. 0 or -EINVAL (none, 0, or a share over the
 * device). */
static inline int gp_parse_dump_at(const char *s, uint64_t *bytes, unsigned *permille)
{
	struct gp_amount a;

	*bytes = 0;
	*permille = 0;
	if (gp_parse_amount(s, &a) != 0)
		return -EINVAL;
	if (a.is_percent) {
		if (!(a.percent > 0 && a.percent <= 100))
			return -EINVAL;
		*permille = (unsigned)(a.percent * 10 + 0.5);
		if (!*permille)
			*permille = 1;
		return 0;
	}
	if (!a.bytes)
		return -EINVAL;
	*bytes = a.bytes;
	return 0;
}

/* "A-B" or "A": steps A to B, counted as the step:N marks do (1 <= A <= B).
 * 0 or -EINVAL. */
static inline int gp_parse_dump_steps(const char *s, uint64_t *first, uint64_t *last)
{
	uint64_t v[2] = { 0, 0 };
	int k = 0;

	for (;;) {
		int digits = 0;

		for (; *s >= '0' && *s <= '9'; s++, digits++) {
			if (v[k] > 100000000000ull)
				return -EINVAL;
			v[k] = v[k] * 10 + (uint64_t)(*s - '0');
		}
		if (!digits)
			return -EINVAL;
		if (*s == '-' && k == 0) {
			s++;
			k = 1;
			continue;
		}
		break;
	}
	if (*s)
		return -EINVAL;
	if (k == 0)
		v[1] = v[0];
	if (v[0] < 1 || v[1] < v[0])
		return -EINVAL;
	*first = v[0];
	*last = v[1];
	return 0;
}

#endif
