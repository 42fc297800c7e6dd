/* The report's page: one HTML file that needs nothing else.
 *
 *   <style>   uPlot's CSS, then the report's
 *   <script type="application/json" id="gpuprof-data">   the data
 *   <script>  uPlot, d3-hierarchy (each after its license), the report's code
 *
 * Nothing from a trace is ever written as HTML: names reach the page only
 * inside the data, a JSON text in which '<', '>', '&', U+2028 and U+2029
 * are written as \u escapes, so that no string can end the element or
 * begin a comment; the report's code puts them into the page as text. A
 * Content-Security-Policy allows the one script and the one style sheet
 * (by their SHA-256) and nothing else: no other script, no inline handler,
 * no request to anywhere. */
#include "report.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sha256.h"

/* assets.c, made by embed.cmake from assets/ and vendor/ */
#define ASSET(name)                                      \
	extern const unsigned char gp_asset_##name[];    \
	extern const size_t gp_asset_##name##_len
ASSET(uplot_js);
ASSET(uplot_css);
ASSET(uplot_license);
ASSET(d3h_js);
ASSET(d3h_license);
ASSET(report_js);
ASSET(report_css);

struct text {
	char *s;
	size_t len, cap;
	int failed;
};

static void put(struct text *t, const void *p, size_t n)
{
	if (t->failed)
		return;
	/* len + n + 1, and the doubled capacity, must not wrap around: no
	 * page is a quarter of the address space */
	if (n > SIZE_MAX / 4 - t->len) {
		t->failed = 1;
		return;
	}
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 1 << 16;
		char *s;

		while (t->len + n + 1 > cap)
			cap *= 2;
		if (!(s = realloc(t->s, cap))) {
			t->failed = 1;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
	memcpy(t->s + t->len, p, n);
	t->len += n;
	t->s[t->len] = '\0';
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

/* A library's license as the comment before its code: minifiers and
 * readers keep comments that open with a "!". A license holding the comment's end would
 * end it early: refused (-EINVAL), as any asset that could end the
 * element. */
static void license(struct text *t, const char *what, const unsigned char *lic, size_t len)
{
	puts_(t, "/*! ");
	puts_(t, what);
	puts_(t, "\n");
	put(t, lic, len);
	puts_(t, "\n*/\n");
}

/* Whether s[0..len) holds needle, ignoring ASCII case. */
static int holds(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(s + i, needle, n) == 0)
			return 1;
	return 0;
}

/* The data with what could end the element escaped ('<', '>', '&', and
 * U+2028/U+2029, which old JavaScript took for line ends). They can only
 * be inside strings in JSON, where the \u escape means the same. */
static void data_escaped(struct text *t, const char *d, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)d[i];

		if (c == '<')
			puts_(t, "\\u003c");
		else if (c == '>')
			puts_(t, "\\u003e");
		else if (c == '&')
			puts_(t, "\\u0026");
		else if (c == 0xe2 && i + 2 < len && (unsigned char)d[i + 1] == 0x80 &&
			 ((unsigned char)d[i + 2] == 0xa8 || (unsigned char)d[i + 2] == 0xa9)) {
			puts_(t, (unsigned char)d[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
			i += 2;
		} else {
			put(t, &d[i], 1);
		}
	}
}

int gp_report_page(FILE *out, const char *data, size_t len)
{
	struct text script = { 0 }, style = { 0 }, page = { 0 };
	char script_hash[45], style_hash[45];
	int rc = 0;

	license(&script, "uPlot (https://github.com/leeoniya/uPlot)", gp_asset_uplot_license,
		gp_asset_uplot_license_len);
	put(&script, gp_asset_uplot_js, gp_asset_uplot_js_len);
	puts_(&script, "\n");
	license(&script, "d3-hierarchy (https://github.com/d3/d3-hierarchy)", gp_asset_d3h_license,
		gp_asset_d3h_license_len);
	put(&script, gp_asset_d3h_js, gp_asset_d3h_js_len);
	puts_(&script, "\n");
	put(&script, gp_asset_report_js, gp_asset_report_js_len);
	put(&style, gp_asset_uplot_css, gp_asset_uplot_css_len);
	puts_(&style, "\n");
	put(&style, gp_asset_report_css, gp_asset_report_css_len);
	if (script.failed || style.failed) {
		rc = -ENOMEM;
		goto cleanup;
	}
	/* the assets are ours, but a vendored file that could end its element
	 * would break the page: refused rather than written */
	if (holds(script.s, script.len, "</script") || holds(script.s, script.len, "<!--") ||
	    holds(style.s, style.len, "</style") ||
	    holds((const char *)gp_asset_uplot_license, gp_asset_uplot_license_len, "*/") ||
	    holds((const char *)gp_asset_d3h_license, gp_asset_d3h_license_len, "*/")) {
		rc = -EINVAL;
		goto cleanup;
	}
	gp_sha256_base64(script.s, script.len, script_hash);
	gp_sha256_base64(style.s, style.len, style_hash);

	puts_(&page, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		     "script-src 'sha256-");
	puts_(&page, script_hash);
	puts_(&page, "'; style-src 'sha256-");
	puts_(&page, style_hash);
	puts_(&page, "'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		     "<meta name=\"generator\" content=\"gpuprof report\">\n"
		     "<title>gpuprof report</title>\n<style>");
	put(&page, style.s, style.len);
	puts_(&page, "</style>\n</head>\n<body>\n<div id=\"app\"></div>\n"
		     "<script type=\"application/json\" id=\"gpuprof-data\">");
	data_escaped(&page, data, len);
	puts_(&page, "</script>\n<script>");
	put(&page, script.s, script.len);
	puts_(&page, "</script>\n</body>\n</html>\n");
	if (page.failed) {
		rc = -ENOMEM;
		goto cleanup;
	}
	if (fwrite(page.s, 1, page.len, out) != page.len)
		rc = -EIO;
cleanup:
	free(script.s);
	free(style.s);
	free(page.s);
	return rc;
}
