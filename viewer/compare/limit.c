/* How the limits people type (exporters/amount.h: --max-increase 2%,
 * --max-peak 80GB, 1.5GiB) are written back: a limit given in a decimal
 * unit in it with its binary value beside it ("80 GB = 74.5 GiB"), so
 * nobody has to guess which one was read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "compare.h"

/* The binary units limits are written back in, largest last. */
static const struct {
	const char *name;
	int shift;
} binary[] = {
	{ "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
};

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
