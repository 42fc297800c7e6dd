/* SHA-256 (FIPS 180-4), for the report's Content-Security-Policy: the
 * page allows only the script and style whose hashes it names. */
#ifndef GPUPROF_SHA256_H
#define GPUPROF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GP_SHA256_BYTES 32

struct gp_sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t block[64];
	size_t used;
};

void gp_sha256_init(struct gp_sha256 *c);
void gp_sha256_update(struct gp_sha256 *c, const void *data, size_t len);
void gp_sha256_final(struct gp_sha256 *c, uint8_t out[GP_SHA256_BYTES]);

/* The digest of data as CSP writes it: base64, 44 characters and a NUL. */
void gp_sha256_base64(const void *data, size_t len, char out[45]);

#endif
