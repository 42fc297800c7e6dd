/* exporters/amount.c: the sizes compare's and check's limits take, and
 * the flight recorder's thresholds.
 * Decimal units (kB, MB, GB, TB and K, M, G, T) are exact powers of 1000,
 * binary ones (KiB... and Ki...) of 1024; anything else is refused; a
 * limit in a decimal unit is written back in it and in binary. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "compare.h"
#include "exporters/dump_when.h"

static uint64_t bytes_of(const char *s, uint64_t *decimal)
{
	struct gp_amount a = { 0 };
	int rc = gp_parse_amount(s, &a);

	if (rc || a.is_percent) {
		CHECK_FAILED_("%s:%d: '%s' refused (%d)\n", __FILE__, __LINE__, s, rc);
		return UINT64_MAX;
	}
	if (decimal)
		*decimal = a.decimal;
	return a.bytes;
}

static int refused(const char *s)
{
	struct gp_amount a;

	return gp_parse_amount(s, &a);
}

static const char *limit(uint64_t v, uint64_t decimal)
{
	static char buf[64];

	gp_cmp_fmt_limit(buf, sizeof(buf), v, decimal);
	return buf;
}

/* The flight recorder's --dump-at and --dump-steps (exporters/dump_when.h):
 * the same amounts, a share at most the device. */
static void test_dump_when(void)
{
	uint64_t bytes, first, last;
	unsigned permille;

	CHECK(gp_parse_dump_at("60G", &bytes, &permille) == 0 && bytes == 60000000000ull && !permille);
	CHECK(gp_parse_dump_at("60GiB", &bytes, &permille) == 0 && bytes == 60ull << 30);
	CHECK(gp_parse_dump_at("87.5%", &bytes, &permille) == 0 && permille == 875 && !bytes);
	CHECK(gp_parse_dump_at("100%", &bytes, &permille) == 0 && permille == 1000);
	CHECK(gp_parse_dump_at("0", &bytes, &permille) == -EINVAL);
	CHECK(gp_parse_dump_at("0%", &bytes, &permille) == -EINVAL);
	CHECK(gp_parse_dump_at("101%", &bytes, &permille) == -EINVAL);
	CHECK(gp_parse_dump_at("60", &bytes, &permille) == -EINVAL);
	CHECK(gp_parse_dump_at("60gb", &bytes, &permille) == -EINVAL);
	CHECK(gp_parse_dump_steps("100-110", &first, &last) == 0 && first == 100 && last == 110);
	CHECK(gp_parse_dump_steps("7", &first, &last) == 0 && first == 7 && last == 7);
	CHECK(gp_parse_dump_steps("0-3", &first, &last) == -EINVAL);
	CHECK(gp_parse_dump_steps("9-3", &first, &last) == -EINVAL);
	CHECK(gp_parse_dump_steps("3-", &first, &last) == -EINVAL);
	CHECK(gp_parse_dump_steps("-3", &first, &last) == -EINVAL);
	CHECK(gp_parse_dump_steps("1-2-3", &first, &last) == -EINVAL);
}

int main(void)
{
	test_dump_when();
	static const char *const junk[] = {
		"256mb", "256Mb", "256mB", "12g", "80gb", "80GIB", "80Gib", "80iB", "80GBs", "1 GB", "GB",
		"1.5b", "1.0001GB", "80 G", "80G ", "+80G", "-1G", "1e9", "0x10G", "1,5GB",
	};
	uint64_t dec = 1;

	/* decimal: powers of 1000, exact to the byte */
	CHECK_EQ_U64(bytes_of("80GB", &dec), UINT64_C(80000000000));
	CHECK_EQ_U64(dec, UINT64_C(1000000000));
	CHECK_EQ_U64(bytes_of("80G", &dec), UINT64_C(80000000000));
	CHECK_EQ_U64(dec, UINT64_C(1000000000));
	CHECK_EQ_U64(bytes_of("13000MB", &dec), UINT64_C(13000000000));
	CHECK_EQ_U64(dec, UINT64_C(1000000));
	CHECK_EQ_U64(bytes_of("12M", NULL), UINT64_C(12000000));
	CHECK_EQ_U64(bytes_of("1.5kB", NULL), 1500);
	CHECK_EQ_U64(bytes_of("1.5KB", NULL), 1500);
	CHECK_EQ_U64(bytes_of("1.5k", NULL), 1500);
	CHECK_EQ_U64(bytes_of("1.5K", NULL), 1500);
	CHECK_EQ_U64(bytes_of("0.001kB", NULL), 1);
	CHECK_EQ_U64(bytes_of("1.234GB", NULL), UINT64_C(1234000000));
	CHECK_EQ_U64(bytes_of("2TB", NULL), UINT64_C(2000000000000));
	CHECK_EQ_U64(bytes_of("2T", NULL), UINT64_C(2000000000000));
	/* the cap, 2^53 = 9007199254740992 bytes */
	CHECK_EQ_U64(bytes_of("9007.199TB", NULL), UINT64_C(9007199000000000));
	CHECK_EQ_INT(refused("9007.2TB"), -ERANGE);
	CHECK_EQ_INT(refused("9999999999999999G"), -ERANGE);

	/* binary: powers of 1024 */
	CHECK_EQ_U64(bytes_of("70GiB", &dec), UINT64_C(70) << 30);
	CHECK_EQ_U64(dec, 0);
	CHECK_EQ_U64(bytes_of("70Gi", &dec), UINT64_C(70) << 30);
	CHECK_EQ_U64(dec, 0);
	CHECK_EQ_U64(bytes_of("512MiB", NULL), UINT64_C(512) << 20);
	CHECK_EQ_U64(bytes_of("512Mi", NULL), UINT64_C(512) << 20);
	CHECK_EQ_U64(bytes_of("2Ki", NULL), 2048);
	CHECK_EQ_U64(bytes_of("1.5TiB", NULL), UINT64_C(3) << 39);
	CHECK_EQ_U64(bytes_of("0.001KiB", NULL), 1); /* rounded down to the byte */
	CHECK_EQ_U64(bytes_of("8192TiB", NULL), UINT64_C(1) << 53);
	CHECK_EQ_INT(refused("8193TiB"), -ERANGE);

	/* bytes; a bare number only as 0 */
	CHECK_EQ_U64(bytes_of("4096B", &dec), 4096);
	CHECK_EQ_U64(dec, 0);
	CHECK_EQ_U64(bytes_of("0", NULL), 0);
	CHECK_EQ_INT(refused("4096"), -EDOM);
	CHECK_EQ_INT(refused("1.5B"), -EINVAL);
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		if (refused(junk[i]) != -EINVAL)
			CHECK_FAILED_("%s:%d: '%s' not refused as not a size\n", __FILE__, __LINE__, junk[i]);

	/* written back: a decimal limit in its unit and in binary; a binary
	 * one as before */
	CHECK_STR(limit(UINT64_C(80000000000), UINT64_C(1000000000)), "80 GB = 74.5 GiB");
	CHECK_STR(limit(UINT64_C(12000000000), UINT64_C(1000000000)), "12 GB = 11.2 GiB");
	CHECK_STR(limit(UINT64_C(13000000000), UINT64_C(1000000)), "13000 MB = 12.1 GiB");
	CHECK_STR(limit(UINT64_C(1500000000), UINT64_C(1000000000)), "1.5 GB = 1.40 GiB");
	CHECK_STR(limit(UINT64_C(1234000000), UINT64_C(1000000000)), "1.234 GB = 1.15 GiB");
	CHECK_STR(limit(UINT64_C(1020), UINT64_C(1000)), "1.02 kB = 1020 B");
	CHECK_STR(limit(UINT64_C(2000000000000), UINT64_C(1000000000000)), "2 TB = 1.82 TiB");
	CHECK_STR(limit(0, UINT64_C(1000000000)), "0 GB = 0 B");
	CHECK_STR(limit(UINT64_C(70) << 30, 0), "70 GiB");
	CHECK_STR(limit(UINT64_C(3) << 29, 0), "1.5 GiB");
	CHECK_STR(limit(4096, 0), "4 KiB");
	CHECK_STR(limit(7, 0), "7 B");
	return CHECK_DONE();
}
