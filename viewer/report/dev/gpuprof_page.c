/* gpuprof_page DATA.json OUT.html: the page that gpuprof report would write
 * for a report's data as it is (gpuprof.report/1, page.c's data), for
 * working on the page's code with data made or damaged by hand
 * (dev/build_page.py, dev/mangle.py). It calls the one page builder,
 * gp_report_page(), so a development page is laid out, escaped and hashed
 * as the command's pages are. Not installed.
 *
 * DATA is checked to be one JSON object (the page's code reads the rest):
 * anything else is one line on stderr and exit 2, with no page written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "report.h"

/* The whole of path in *text (NUL-terminated, the caller's to free) and its
 * length in *len: 0 or -errno. */
static int read_all(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (n + 1 >= cap) {
			size_t more = cap ? cap * 2 : 1 << 16;
			char *p = realloc(buf, more);

			if (!p) {
				rc = -ENOMEM;
				goto out;
			}
			buf = p;
			cap = more;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);

		n += got;
		if (got == 0) {
			if (ferror(f))
				rc = -EIO;
			break;
		}
	}
out:
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*text = buf; /* handed over */
	*len = n;
	return 0;
}

/* Whether text[0..len) is one JSON object and nothing else. */
static int is_json_object(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc;
	int ok;

	if (!tok)
		return 0;
	doc = json_tokener_parse_ex(tok, text, (int)len);
	ok = doc && json_tokener_get_error(tok) == json_tokener_success &&
	     json_object_is_type(doc, json_type_object);
	/* what follows the object may only be white space */
	for (size_t i = ok ? json_tokener_get_parse_end(tok) : len; i < len; i++)
		if (!text[i] || !strchr(" \t\r\n", text[i]))
			ok = 0;
	json_object_put(doc);
	json_tokener_free(tok);
	return ok;
}

int main(int argc, char **argv)
{
	char *data = NULL;
	size_t len = 0;
	FILE *out = NULL;
	int rc, status = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: gpuprof_page DATA.json OUT.html\n");
		return 2;
	}
	if ((rc = read_all(argv[1], &data, &len))) {
		fprintf(stderr, "gpuprof_page: %s: %s\n", argv[1], strerror(-rc));
		return rc == -ENOMEM ? 1 : 2;
	}
	if (len > 1u << 30 || !is_json_object(data, len)) {
		fprintf(stderr, "gpuprof_page: %s: not one JSON object (a report's data)\n", argv[1]);
		status = 2;
		goto cleanup;
	}
	if (!(out = fopen(argv[2], "wb"))) {
		fprintf(stderr, "gpuprof_page: %s: %s\n", argv[2], strerror(errno));
		goto cleanup;
	}
	rc = gp_report_page(out, data, len);
	if (fclose(out) && !rc)
		rc = -EIO;
	if (rc) {
		fprintf(stderr, "gpuprof_page: %s: %s\n", argv[2], strerror(-rc));
		remove(argv[2]);
		goto cleanup;
	}
	status = 0;
cleanup:
	free(data);
	return status;
}
