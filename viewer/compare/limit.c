/* The limits people type (--max-increase 2%, --max-peak 1.5GiB) and how
 * they are written back. Parsing is strict, like every option of gpuprof: a
 * CI gate that read "2 %" or "256MB" as something it was not would pass or
 * fail for the wrong reason, so anything unusual is refused. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "compare.h"

static const struct {
	const char *name;
	int shift;
} units[] = {
	{ "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
};

#define MAX_DECIMALS 3

int gp_cmp_parse_amount(const char *s, struct gp_cmp_amount *out)
{
	const char *p = s;
	uint64_t whole = 0, frac = 0, scale = 1;
	int nwhole = 0, nfrac = 0, shift = -1;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (++nwhole > 16)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (!nwhole)
		return -EINVAL;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (++nfrac > MAX_DECIMALS)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
		if (!nfrac)
			return -EINVAL;
	}
	if (strcmp(p, "%") == 0) {
		double v = (double)whole + (double)frac / (double)scale;

		if (v > 1000)
			return -ERANGE;
		out->is_percent = 1;
		out->percent = v;
		out->bytes = 0;
		return 0;
	}
	if (!*p) {
		/* "5": 5% or 5 MiB? Only 0 means the same in every unit. */
		if (whole || frac)
			return -EDOM;
		shift = 0;
	} else {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(p, units[i].name) == 0)
				shift = units[i].shift;
	}
	if (shift < 0)
		return -EINVAL;
	if (shift == 0 && nfrac)
		return -EINVAL; /* a fraction of a byte */
	/* whole < 10^16 < 2^54: beyond the cap once shifted by 10 or more, so
	 * only the cap needs checking before the shift */
	if (whole > (GP_CMP_MAX_BYTES >> shift))
		return -ERANGE;
	/* frac < 1000 < 2^10 and shift <= 40: no overflow */
	whole = (whole << shift) + ((frac << shift) / scale);
	if (whole > GP_CMP_MAX_BYTES)
		return -ERANGE;
	out->is_percent = 0;
	out->percent = 0;
	out->bytes = whole;
	return 0;
}

void gp_cmp_fmt_limit(char *buf, size_t cap, uint64_t v)
{
	for (int i = (int)(sizeof(units) / sizeof(units[0])) - 1; i > 0; i--) {
		uint64_t u = UINT64_C(1) << units[i].shift;
		uint64_t hundredths;

		if (v < u)
			continue;
		/* v <= 2^53, so v * 100 fits */
		if ((v * 100) % u) {
			an_fmt_bytes(buf, cap, v);
			return;
		}
		hundredths = (v * 100) / u;
		if (hundredths % 100 == 0)
			snprintf(buf, cap, "%" PRIu64 " %s", hundredths / 100, units[i].name);
		else if (hundredths % 10 == 0)
			snprintf(buf, cap, "%" PRIu64 ".%" PRIu64 " %s", hundredths / 100,
				 hundredths / 10 % 10, units[i].name);
		else
			snprintf(buf, cap, "%" PRIu64 ".%02" PRIu64 " %s", hundredths / 100,
				 hundredths % 100, units[i].name);
		return;
	}
	snprintf(buf, cap, "%" PRIu64 " B", v);
}

void gp_cmp_default_limit(struct gp_cmp_limit *l)
{
	l->has_percent = 1;
	l->percent = 1.0;
	l->has_bytes = 1;
	l->bytes = UINT64_C(2) << 20;
}
