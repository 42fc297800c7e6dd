/* The amounts people type (amount.h). Parsing is strict, like every option
 * of gpuprof: a CI gate that read "2 %" or "256mb" as something it was not
 * would pass or fail for the wrong reason, so anything unusual is refused.
 *
 * Units: SI prefixes are powers of 1000 and IEC prefixes powers of 1024,
 * as the two standards (and numfmt, Kubernetes) have them: 80GB and 80G are
 * 80,000,000,000 bytes, the figure of spec sheets; 80GiB and 80Gi are
 * 80 x 2^30, the unit PyTorch and gpuprof print. */
#include "amount.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *name;
	uint64_t bytes;
	int decimal;
} units[] = {
	{ "B", 1, 0 },
	{ "KiB", UINT64_C(1) << 10, 0 }, { "Ki", UINT64_C(1) << 10, 0 },
	{ "MiB", UINT64_C(1) << 20, 0 }, { "Mi", UINT64_C(1) << 20, 0 },
	{ "GiB", UINT64_C(1) << 30, 0 }, { "Gi", UINT64_C(1) << 30, 0 },
	{ "TiB", UINT64_C(1) << 40, 0 }, { "Ti", UINT64_C(1) << 40, 0 },
	{ "kB", UINT64_C(1000), 1 }, { "KB", UINT64_C(1000), 1 },
	{ "k", UINT64_C(1000), 1 }, { "K", UINT64_C(1000), 1 },
	{ "MB", UINT64_C(1000000), 1 }, { "M", UINT64_C(1000000), 1 },
	{ "GB", UINT64_C(1000000000), 1 }, { "G", UINT64_C(1000000000), 1 },
	{ "TB", UINT64_C(1000000000000), 1 }, { "T", UINT64_C(1000000000000), 1 },
};

#define MAX_DECIMALS 3

int gp_parse_amount(const char *s, struct gp_amount *out)
{
	const char *p = s;
	uint64_t whole = 0, frac = 0, scale = 1, unit = 0;
	int nwhole = 0, nfrac = 0, decimal = 0;

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
		out->decimal = 0;
		return 0;
	}
	if (!*p) {
		/* "5": 5% or 5 MiB? Only 0 means the same in every unit. */
		if (whole || frac)
			return -EDOM;
		unit = 1;
	} else {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (strcmp(p, units[i].name) == 0) {
				unit = units[i].bytes;
				decimal = units[i].decimal;
			}
		}
	}
	if (!unit)
		return -EINVAL;
	if (unit == 1 && nfrac)
		return -EINVAL; /* a fraction of a byte */
	if (whole > GP_AMOUNT_MAX_BYTES / unit)
		return -ERANGE;
	/* frac < 1000 and unit <= 2^40: no overflow. Exact for a decimal
	 * unit (scale divides it); a binary one rounds down to the byte. */
	whole = whole * unit + frac * unit / scale;
	if (whole > GP_AMOUNT_MAX_BYTES)
		return -ERANGE;
	out->is_percent = 0;
	out->percent = 0;
	out->bytes = whole;
	out->decimal = decimal ? unit : 0;
	return 0;
}

