/* viewer/report/sha256.c against FIPS 180-4's examples and a long input
 * fed in uneven pieces; the base64 form as a Content-Security-Policy
 * writes it. */
#include <stdlib.h>

#include "check.h"
#include "sha256.h"

static void hex(const uint8_t *d, char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void digest_of(const char *s, char out[65])
{
	struct gp_sha256 c;
	uint8_t d[32];

	gp_sha256_init(&c);
	gp_sha256_update(&c, s, strlen(s));
	gp_sha256_final(&c, d);
	hex(d, out);
}

int main(void)
{
	char h[65], b64[45];
	struct gp_sha256 c;
	uint8_t d[32];

	digest_of("", h);
	CHECK_STR(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	digest_of("abc", h);
	CHECK_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* 56 bytes: the padding takes a second block */
	digest_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
	CHECK_STR(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* a million 'a', in pieces of 1 to 97 bytes */
	char *a = malloc(1000000);
	CHECK(a != NULL);
	if (a) {
		memset(a, 'a', 1000000);
		gp_sha256_init(&c);
		for (size_t at = 0, step = 1; at < 1000000; at += step, step = step % 97 + 1)
			gp_sha256_update(&c, a + at, at + step > 1000000 ? 1000000 - at : step);
		gp_sha256_final(&c, d);
		hex(d, h);
		CHECK_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
		free(a);
	}
	/* as CSP writes it: printf 'abc' | openssl dgst -sha256 -binary | base64 */
	gp_sha256_base64("abc", 3, b64);
	CHECK_STR(b64, "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
	return CHECK_DONE();
}
