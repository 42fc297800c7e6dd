/* The limits people type (--max-increase 2%, --max-peak 80GB, 1.5GiB) and
 * how they are written back. Parsing is strict, like every option of
 * gpuprof: a CI gate that read "2 %" or "256mb" as something it was not
 * would pass or fail for the wrong reason, so anything unusual is refused.
 *
 * Units: SI prefixes are powers of 1000 and IEC prefixes powers of 1024,
 * as the two standards (and numfmt, Kubernetes) have them: 80GB and 80G are
 * 80,000,000,000 bytes, the figure of spec sheets; 80GiB and 80Gi are
 * 80 x 2^30, the unit PyTorch and gpuprof print. A limit given in a decimal
 * unit is written back in it with its binary value beside it ("80 GB =
 * 74.5 GiB"), so nobody has to guess which one was read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "compare.h"

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

/* The binary units limits are written back in, largest last. */
static const struct {
	const char *name;
	int shift;
} binary[] = {
	{ "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
};

#define MAX_DECIMALS 3

int gp_cmp_parse_amount(const char *s, struct gp_cmp_amount *out)
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
	if (whole > GP_CMP_MAX_BYTES / unit)
		return -ERANGE;
	/* frac < 1000 and unit <= 2^40: no overflow. Exact for a decimal
	 * unit (scale divides it); a binary one rounds down to the byte. */
	whole = whole * unit + frac * unit / scale;
	if (whole > GP_CMP_MAX_BYTES)
		return -ERANGE;
	out->is_percent = 0;
	out->percent = 0;
	out->bytes = whole;
	out->decimal = decimal ? unit : 0;
	return 0;
}

/* v in the decimal unit of that many bytes, up to three decimals: what a
 * limit given as "13000MB" or "1.5GB" was. */
static void fmt_decimal(char *buf, size_t cap, uint64_t v, uint64_t unit)
{
	const char *name = unit == UINT64_C(1000) ? "kB" : unit == UINT64_C(1000000) ? "MB" :
			   unit == UINT64_C(1000000000) ? "GB" : "TB";
	/* the rest < unit <= 10^12: times 1000 fits */
	uint64_t t = v % unit * 1000 / unit, whole = v / unit;

	if (!t)
		snprintf(buf, cap, "%" PRIu64 " %s", whole, name);
	else if (t % 100 == 0)
		snprintf(buf, cap, "%" PRIu64 ".%" PRIu64 " %s", whole, t / 100, name);
	else if (t % 10 == 0)
		snprintf(buf, cap, "%" PRIu64 ".%02" PRIu64 " %s", whole, t / 10, name);
	else
		snprintf(buf, cap, "%" PRIu64 ".%03" PRIu64 " %s", whole, t, name);
}

static void fmt_binary(char *buf, size_t cap, uint64_t v)
{
	for (int i = (int)(sizeof(binary) / sizeof(binary[0])) - 1; i > 0; i--) {
		uint64_t u = UINT64_C(1) << binary[i].shift;
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
			snprintf(buf, cap, "%" PRIu64 " %s", hundredths / 100, binary[i].name);
		else if (hundredths % 10 == 0)
			snprintf(buf, cap, "%" PRIu64 ".%" PRIu64 " %s", hundredths / 100,
				 hundredths / 10 % 10, binary[i].name);
		else
			snprintf(buf, cap, "%" PRIu64 ".%02" PRIu64 " %s", hundredths / 100,
				 hundredths % 100, binary[i].name);
		return;
	}
	snprintf(buf, cap, "%" PRIu64 " B", v);
}

void gp_cmp_fmt_limit(char *buf, size_t cap, uint64_t v, uint64_t decimal)
{
	char d[40], b[32];

	if (!decimal) {
		fmt_binary(buf, cap, v);
		return;
	}
	fmt_decimal(d, sizeof(d), v, decimal);
	fmt_binary(b, sizeof(b), v);
	snprintf(buf, cap, "%s = %s", d, b);
}

void gp_cmp_default_limit(struct gp_cmp_limit *l)
{
	l->has_percent = 1;
	l->percent = 1.0;
	l->has_bytes = 1;
	l->bytes = UINT64_C(2) << 20;
	l->decimal = 0;
}
