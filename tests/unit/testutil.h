/* Helpers shared by the unit tests: scratch directories, whole-file I/O, an
 * independent gunzip (plain zlib, not the code under test) and strict JSON
 * parsing with json-c. Test code: failures here end the test via abort(). */
#ifndef GPUPROF_TEST_UTIL_H
#define GPUPROF_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct tu_bytes {
	unsigned char *p;
	size_t n;
	size_t cap;
};

static inline __attribute__((noreturn)) void tu_die(const char *what)
{
	fprintf(stderr, "test setup failed: %s: %s\n", what, strerror(errno));
	abort();
}

static inline void tu_bytes_add(struct tu_bytes *b, const void *p, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->n + n + 1)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			tu_die("realloc");
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = 0; /* handy for strstr() on text */
}

static inline void tu_bytes_free(struct tu_bytes *b)
{
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

/* Fresh directory under $TMPDIR or /tmp; path written to dir (PATH_MAX). */
static inline void tu_mkdtemp(char *dir, const char *tag)
{
	const char *base = getenv("TMPDIR");

	snprintf(dir, PATH_MAX, "%s/gpuprof-%s-XXXXXX", base && *base ? base : "/tmp", tag);
	if (!mkdtemp(dir))
		tu_die("mkdtemp");
}

static inline int tu_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void tu_rmtree(const char *dir)
{
	nftw(dir, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void tu_path(char *out, const char *dir, const char *name)
{
	size_t dn = strlen(dir), nn = strlen(name);

	if (dn + 1 + nn >= PATH_MAX) {
		errno = ENAMETOOLONG;
		tu_die(name);
	}
	memcpy(out, dir, dn);
	out[dn] = '/';
	memcpy(out + dn + 1, name, nn + 1);
}

static inline int tu_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Whole file; missing file gives n = 0 and ok = 0. */
static inline struct tu_bytes tu_read_file(const char *path, int *ok)
{
	struct tu_bytes b = { 0 };
	unsigned char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	tu_bytes_add(&b, "", 0);
	if (ok)
		*ok = fd >= 0;
	if (fd < 0)
		return b;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		tu_bytes_add(&b, buf, (size_t)n);
	close(fd);
	return b;
}

static inline void tu_write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, p, n) != (ssize_t)n || close(fd) != 0)
		tu_die(path);
}

/* Inflates a gzip member as far as the data goes. Returns the last zlib code:
 * Z_STREAM_END for a complete member whose CRC and length matched (zlib checks
 * the trailer), Z_BUF_ERROR/Z_OK when the data stops early. *used gets the
 * compressed bytes consumed (to spot data after the member). */
static inline int tu_gunzip(const unsigned char *in, size_t n, struct tu_bytes *out, size_t *used)
{
	unsigned char buf[65536];
	z_stream zs;
	int zr;

	memset(&zs, 0, sizeof(zs));
	tu_bytes_add(out, "", 0);
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		tu_die("inflateInit2");
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)n;
	do {
		zs.next_out = buf;
		zs.avail_out = sizeof(buf);
		zr = inflate(&zs, Z_NO_FLUSH);
		tu_bytes_add(out, buf, sizeof(buf) - zs.avail_out);
	} while (zr == Z_OK);
	if (used)
		*used = n - zs.avail_in;
	inflateEnd(&zs);
	return zr;
}

/* Strict json-c parse of exactly s[0..n); NULL if invalid or if anything
 * follows the value. UTF-8 is validated too. */
static inline struct json_object *tu_parse(const char *s, size_t n)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	struct json_object *o;

	if (!tok)
		tu_die("json_tokener_new");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, (int)n);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != n) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* obj[key] or NULL, without json-c's out-parameter dance. */
static inline struct json_object *tu_get(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

/* NULL-tolerant array access, so a broken output fails CHECKs instead of
 * tripping json-c's assertions. */
static inline size_t tu_len(struct json_object *arr)
{
	return arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
}

static inline struct json_object *tu_idx(struct json_object *arr, size_t i)
{
	return i < tu_len(arr) ? json_object_array_get_idx(arr, i) : NULL;
}

/* obj[key] as a string, "" if missing or not a string. */
static inline const char *tu_str(struct json_object *o, const char *key)
{
	struct json_object *v = tu_get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* Count of lines in s[0..n) that end with '\n'. */
static inline size_t tu_count_lines(const unsigned char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += s[i] == '\n';
	return c;
}

/* Deterministic PRNG (xorshift64*) so failures reproduce. */
static inline uint64_t tu_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

#endif
