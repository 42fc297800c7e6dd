/* The human report, rendered from the result document (result.c) so that
 * the text and --json never disagree. Tables are aligned; sizes in binary
 * units; color (only when asked: a terminal, NO_COLOR unset) marks
 * headings, problems and advice. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "units.h"

#define MAX_DEPTH_SHOWN 8

struct out {
	FILE *f;
	int color;
	int top;
};

static const char *C(const struct out *o, const char *code)
{
	return o->color ? code : "";
}
#define BOLD "\033[1m"
#define RED "\033[1;31m"
#define YEL "\033[33m"
#define DIM "\033[2m"
#define OFF "\033[0m"

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (o && json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, k, &v);
	return v;
}

static int64_t geti(struct json_object *o, const char *k)
{
	return json_object_get_int64(get(o, k));
}

static double getd(struct json_object *o, const char *k)
{
	return json_object_get_double(get(o, k));
}

static const char *gets(struct json_object *o, const char *k)
{
	struct json_object *v = get(o, k);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* the same, "" when absent: for printing */
static const char *gs(struct json_object *o, const char *k)
{
	const char *s = gets(o, k);

	return s ? s : "";
}

static size_t alen(struct json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static struct json_object *at(struct json_object *a, size_t i)
{
	return json_object_array_get_idx(a, i);
}

/* sizes and times into small rotating buffers, for use inside one printf */
static const char *sz(uint64_t v)
{
	static char buf[8][32];
	static int k;

	k = (k + 1) % 8;
	an_fmt_bytes(buf[k], sizeof(buf[k]), v);
	return buf[k];
}

static const char *szj(struct json_object *o, const char *key)
{
	return get(o, key) ? sz((uint64_t)geti(o, key)) : "-";
}

static const char *pct(double share)
{
	static char buf[8][16];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%.1f%%", share * 100.0);
	return buf[k];
}

/* "12.346 s, step 3, backward" from an object with t, step, phase */
static const char *when(struct json_object *o)
{
	static char buf[4][160];
	static int k;
	const char *phase = gets(o, "phase");
	size_t n;

	k = (k + 1) % 4;
	n = (size_t)snprintf(buf[k], sizeof(buf[k]), "%.3f s", getd(o, "t"));
	if (get(o, "step") && n < sizeof(buf[k]))
		n += (size_t)snprintf(buf[k] + n, sizeof(buf[k]) - n, ", step %" PRId64, geti(o, "step"));
	if (phase && strcmp(phase, "none") && n < sizeof(buf[k]))
		snprintf(buf[k] + n, sizeof(buf[k]) - n, ", %s", phase);
	return buf[k];
}

/* ---- aligned tables ---- */

#define MAX_COLS 8

struct table {
	int ncols;
	const char *align; /* 'l' or 'r' per column */
	char **cells;      /* rows * ncols, owned */
	size_t rows, cap;
	int oom;
};

static void t_row(struct table *t, ...)
{
	va_list ap;

	if (t->rows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **c = realloc(t->cells, cap * (size_t)t->ncols * sizeof(*c));

		if (!c) {
			t->oom = 1;
			return;
		}
		t->cells = c;
		t->cap = cap;
	}
	va_start(ap, t);
	for (int i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);

		t->cells[t->rows * (size_t)t->ncols + (size_t)i] = strdup(s ? s : "");
	}
	va_end(ap);
	t->rows++;
}

/* display width: UTF-8 code points */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

/* header: the first row is the table's heading, set apart by a blank line
 * before it (and bold on a terminal) */
static void t_print(const struct out *o, struct table *t, const char *indent, int header)
{
	size_t w[MAX_COLS] = { 0 };

	if (header == 2)
		fputc('\n', o->f);

	for (size_t r = 0; r < t->rows; r++)
		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
			size_t n = s ? width(s) : 0;

			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r < t->rows; r++) {
		const char *pre = header && r == 0 ? C(o, BOLD) : "";
		size_t line = 0;
		char buf[4096];

		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
			size_t n, pad;

			s = s ? s : "";
			n = width(s);
			pad = w[c] - n;
			if (c == t->ncols - 1 && t->align[c] == 'l')
				pad = 0; /* no trailing blanks */
			if (line + pad + strlen(s) + 3 >= sizeof(buf))
				break;
			if (c)
				buf[line++] = ' ', buf[line++] = ' ';
			if (t->align[c] == 'r') {
				memset(buf + line, ' ', pad);
				line += pad;
			}
			memcpy(buf + line, s, strlen(s));
			line += strlen(s);
			if (t->align[c] != 'r') {
				memset(buf + line, ' ', pad);
				line += pad;
			}
		}
		while (line && buf[line - 1] == ' ')
			line--;
		fprintf(o->f, "%s%s%.*s%s\n", indent, pre, (int)line, buf, *pre ? C(o, OFF) : "");
	}
	for (size_t i = 0; i < t->rows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->rows = t->cap = 0;
}

/* ---- sections ---- */

static void traces(const struct out *o, struct json_object *doc)
{
	struct json_object *tr = get(doc, "traces");
	size_t n = alen(tr);

	for (size_t i = 0; i < n; i++) {
		struct json_object *t = at(tr, i), *torch = get(t, "torch"), *notes = get(t, "notes");
		const char *cmd = gets(t, "cmdline");

		fprintf(o->f, "%sTrace %zu: %s%s\n", C(o, BOLD), i + 1, gs(t, "path"), C(o, OFF));
		fprintf(o->f, "  process %" PRId64 "%s%s, %s mode", geti(t, "pid"), cmd ? ": " : "",
			cmd ? cmd : "", gs(t, "mode"));
		if (torch && gets(torch, "version"))
			fprintf(o->f, ", torch %s", gs(torch, "version"));
		if (torch && gets(torch, "alloc_conf") && *gets(torch, "alloc_conf"))
			fprintf(o->f, ", PYTORCH_CUDA_ALLOC_CONF=%s", gs(torch, "alloc_conf"));
		fputc('\n', o->f);
		if (json_object_get_boolean(get(t, "complete")))
			fprintf(o->f, "  complete%s; %" PRId64 " events\n",
				get(t, "clean_exit") && !json_object_get_boolean(get(t, "clean_exit"))
					? " (the program did not exit normally)" : "",
				geti(t, "events"));
		else
			fprintf(o->f, "  %sincomplete%s; %" PRId64 " events\n", C(o, YEL), C(o, OFF),
				geti(t, "events"));
		for (size_t k = 0; k < alen(notes); k++)
			fprintf(o->f, "  %snote:%s %s\n", C(o, YEL), C(o, OFF),
				json_object_get_string(at(notes, k)));
	}
}

static void summary(const struct out *o, struct json_object *d)
{
	struct json_object *s = get(d, "summary"), *al = get(s, "allocated"), *rs = get(s, "reserved");
	struct json_object *tot = get(s, "device_total"), *oth = get(s, "other"), *kinds = get(s, "kinds");
	struct json_object *fr = get(s, "fragmentation");
	struct table t = { 4, "lrrl", NULL, 0, 0, 0 };
	char at_s[64];
	int native = !strcmp(gs(d, "mode"), "native");
	/* at PyTorch's sampled marks, the worst gap and the peak may lie between two */
	const char *fr_sampled = !strcmp(gs(fr, "source"), "torch marks") ? " (sampled)" : "";

	t_row(&t, "memory", "at end", "peak", "peak at");
#define PEAK_AT(x) (get(x, "peak_t") ? (snprintf(at_s, sizeof(at_s), "%.3f s", getd(x, "peak_t")), at_s) : "")
	if (!json_object_get_boolean(get(al, "known")))
		t_row(&t, "allocated", "?", "?", "(not known from CUDA alone)");
	else if (!native)
		t_row(&t, "allocated", szj(al, "end"), szj(al, "peak"), PEAK_AT(al));
	else if (!strcmp(gs(al, "source"), "torch history"))
		/* PyTorch's own numbers after every allocation and free */
		t_row(&t, "allocated (PyTorch history)", szj(al, "end"), szj(al, "peak"), PEAK_AT(al));
	else
		/* PyTorch's own numbers, marked by the hooks every 100 ms or so:
		 * the peak between two marks is not seen */
		t_row(&t, "allocated (sampled)", szj(al, "end"), szj(al, "peak"),
		      get(al, "peak_t") ? PEAK_AT(al) : "(PyTorch's marks)");
	if (json_object_get_boolean(get(rs, "known")))
		t_row(&t, native ? "reserved (segments)" : "reserved (pools)", szj(rs, "end"),
		      szj(rs, "peak"), PEAK_AT(rs));
	if (oth) {
		t_row(&t, "other (not PyTorch)", szj(oth, "end"), szj(oth, "peak"), "");
		t_row(&t, "device total", szj(tot, "end"), szj(tot, "peak"), PEAK_AT(tot));
	}
#undef PEAK_AT
	if (kinds) {
		json_object_object_foreach(kinds, k, v)
			t_row(&t, k, szj(v, "end"), szj(v, "peak"), "");
	}
	t_print(o, &t, "  ", 1);
	fprintf(o->f, "  allocations: %" PRId64 "%s", geti(s, "allocations"), oth ? " by PyTorch" : "");
	if (oth)
		fprintf(o->f, ", %" PRId64 " other", geti(oth, "allocations"));
	fprintf(o->f, "; %" PRId64 " freed; %" PRId64 " live at the end (at most %" PRId64 " at once)\n",
		geti(s, "frees"), geti(s, "live_allocations_end"), geti(s, "max_live_allocations"));
	if (kinds) {
		json_object_object_foreach(kinds, k2, v2)
			fprintf(o->f, "  %s: %" PRId64 " allocations (not counted above)\n", k2,
				geti(v2, "allocations"));
	}
	if (!json_object_get_boolean(get(fr, "known"))) {
		if (native)
			fprintf(o->f, "  fragmentation: not known (%s)\n", gs(fr, "why"));
	} else if (get(fr, "worst")) {
		struct json_object *w = get(fr, "worst");

		fprintf(o->f, "  fragmentation%s: worst %s reserved but not allocated at %s (%s reserved, "
			"%s allocated); %s at the end\n", fr_sampled, szj(w, "gap"),
			when(w), szj(w, "reserved"), szj(w, "allocated"), szj(fr, "end"));
	} else {
		fprintf(o->f, "  fragmentation: none (reserved never exceeded allocated)\n");
	}
	if (get(fr, "worst") && get(fr, "at_peak")) {
		struct json_object *pk = get(fr, "at_peak");

		fprintf(o->f, "  at the reserved peak%s: %s of %s not allocated (%.0f%%), at %s\n",
			fr_sampled, szj(pk, "gap"), szj(pk, "reserved"),
			100.0 * (double)geti(pk, "gap") / (double)geti(pk, "reserved"), when(pk));
	}
}

static void cats(const struct out *o, struct json_object *arr, const char *indent)
{
	struct table t = { 4, "lrrr", NULL, 0, 0, 0 };
	char cnt[32];

	if (!alen(arr))
		return;
	t_row(&t, "by category", "bytes", "share", "allocations");
	for (size_t i = 0; i < alen(arr); i++) {
		struct json_object *c = at(arr, i), *by = get(c, "by");

		snprintf(cnt, sizeof(cnt), "%" PRId64, geti(c, "count"));
		t_row(&t, gs(c, "category"), szj(c, "bytes"), pct(getd(c, "share")), cnt);
		for (size_t k = 0; k < alen(by) && k < (size_t)o->top; k++) {
			struct json_object *e = at(by, k);
			char name[300];

			snprintf(cnt, sizeof(cnt), "%" PRId64, geti(e, "count"));
			snprintf(name, sizeof(name), "  %s", gs(e, "name"));
			t_row(&t, name, szj(e, "bytes"), pct(getd(e, "share")), cnt);
		}
		if (alen(by) > (size_t)o->top) {
			snprintf(cnt, sizeof(cnt), "  (%zu more)", alen(by) - (size_t)o->top);
			t_row(&t, cnt, "", "", "");
		}
	}
	t_print(o, &t, indent, 2);
}

static void layer_rows(const struct out *o, struct table *t, struct json_object *node, int depth,
		       const char *sep)
{
	struct json_object *kids = get(node, "children");
	char name[2048];
	size_t n;
	char cnt[32];

	n = (size_t)snprintf(name, sizeof(name), "%*s%s", depth * 2, "", gs(node, "name"));
	/* a chain of single children holding everything: one row */
	while (alen(kids) == 1 && geti(at(kids, 0), "bytes") == geti(node, "bytes") &&
	       n < sizeof(name)) {
		node = at(kids, 0);
		kids = get(node, "children");
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%s", sep, gs(node, "name"));
	}
	snprintf(cnt, sizeof(cnt), "%" PRId64, geti(node, "count"));
	t_row(t, name, szj(node, "bytes"), pct(getd(node, "share")), cnt);
	if (depth + 1 >= MAX_DEPTH_SHOWN)
		return;
	for (size_t i = 0; i < alen(kids); i++) {
		if (i >= (size_t)o->top || getd(at(kids, i), "share") < 0.005) {
			uint64_t rest = 0;

			for (size_t k = i; k < alen(kids); k++)
				rest += (uint64_t)geti(at(kids, k), "bytes");
			snprintf(name, sizeof(name), "%*s(%zu more)", (depth + 1) * 2, "", alen(kids) - i);
			t_row(t, name, sz(rest), "", "");
			break;
		}
		layer_rows(o, t, at(kids, i), depth + 1, sep);
	}
}

static void layers(const struct out *o, struct json_object *arr, const char *indent, int torch)
{
	struct table t = { 4, "lrrr", NULL, 0, 0, 0 };

	if (!alen(arr))
		return;
	t_row(&t, torch ? "by layer (module path)" : "by NVTX range", "bytes", "share", "allocations");
	for (size_t i = 0; i < alen(arr); i++) {
		if (i >= (size_t)o->top) {
			char more[64];

			snprintf(more, sizeof(more), "(%zu more)", alen(arr) - i);
			t_row(&t, more, "", "", "");
			break;
		}
		layer_rows(o, &t, at(arr, i), 0, torch ? "." : " > ");
	}
	t_print(o, &t, indent, 2);
}

static void groups(const struct out *o, struct json_object *arr, const char *title,
		   const char *key, const char *indent)
{
	struct table t = { 4, "lrrr", NULL, 0, 0, 0 };
	char cnt[32];

	if (!alen(arr))
		return;
	t_row(&t, title, "bytes", "share", "allocations");
	for (size_t i = 0; i < alen(arr); i++) {
		struct json_object *e = at(arr, i);

		if (i >= (size_t)o->top) {
			snprintf(cnt, sizeof(cnt), "(%zu more)", alen(arr) - i);
			t_row(&t, cnt, "", "", "");
			break;
		}
		snprintf(cnt, sizeof(cnt), "%" PRId64, geti(e, "count"));
		t_row(&t, gs(e, key), szj(e, "bytes"), pct(getd(e, "share")), cnt);
	}
	t_print(o, &t, indent, 2);
}

static void top_allocs(const struct out *o, struct json_object *arr, const char *indent, int torch)
{
	struct table t = { torch ? 7 : 4, torch ? "rrrllll" : "rrll", NULL, 0, 0, 0 };

	if (!alen(arr))
		return;
	fprintf(o->f, "\n%s%slargest allocations%s\n", indent, C(o, BOLD), C(o, OFF));
	if (torch)
		t_row(&t, "bytes", "made at", "step", "phase", "category", "layer", "API");
	else
		t_row(&t, "bytes", "made at", "NVTX range", "API");
	for (size_t i = 0; i < alen(arr); i++) {
		struct json_object *e = at(arr, i);
		char tm[32], st[16], catbuf[300];
		const char *cat = gets(e, "category"), *what = gets(e, "what"), *l = gets(e, "layer");
		const char *api = gets(e, "api") ? gs(e, "api") : "-";

		snprintf(tm, sizeof(tm), "%.3f s", getd(e, "t"));
		if (!torch) {
			t_row(&t, szj(e, "bytes"), tm, l ? l : "-", api);
			continue;
		}
		if (get(e, "step"))
			snprintf(st, sizeof(st), "%" PRId64, geti(e, "step"));
		else
			snprintf(st, sizeof(st), "-");
		snprintf(catbuf, sizeof(catbuf), "%s%s%s%s", cat ? cat : "", what ? " (" : "",
			 what ? what : "", what ? ")" : "");
		t_row(&t, szj(e, "bytes"), tm, st, gs(e, "phase"), catbuf, l ? l : "-", api);
	}
	t_print(o, &t, indent, 0);
}

/* the groupings of a set (peak, OOM) */
static void describe(const struct out *o, struct json_object *x, const char *indent, int torch)
{
	cats(o, get(x, "by_category"), indent);
	layers(o, get(x, "by_layer"), indent, torch);
	groups(o, get(x, "by_phase"), "by phase (when made)", "phase", indent);
	groups(o, get(x, "by_op"), "by op", "op", indent);
	groups(o, get(x, "by_api"), "by API", "api", indent);
	top_allocs(o, get(x, "top"), indent, torch);
}

static void peak(const struct out *o, struct json_object *d, int torch)
{
	struct json_object *p = get(d, "peak");
	const char *layer = gets(p, "layer");

	if (!p) {
		fprintf(o->f, "  no device memory was allocated\n");
		return;
	}
	fprintf(o->f, "\n  %sPeak: %s %s at %s%s", C(o, BOLD), szj(p, "bytes"), gs(p, "what"),
		when(p), C(o, OFF));
	if (layer)
		fprintf(o->f, " (allocating in %s)", layer);
	fputc('\n', o->f);
	if (geti(p, "other"))
		fprintf(o->f, "  with %s outside PyTorch: %s of device memory in this process",
			szj(p, "other"), szj(p, "device_total"));
	else
		fprintf(o->f, "  %s of device memory in this process", szj(p, "device_total"));
	if (get(d, "capacity"))
		fprintf(o->f, ", %s of the device's %s", pct((double)geti(p, "device_total") /
							    (double)geti(d, "capacity")),
			szj(d, "capacity"));
	fprintf(o->f, "; live allocations: %" PRId64 "\n", geti(p, "live_allocations"));
	describe(o, p, "    ", torch);
}

static void leak(const struct out *o, struct json_object *d, int torch)
{
	struct json_object *st = get(d, "steps"), *lk = get(d, "leak"), *ser = get(st, "series");
	const char *v = gets(lk, "verdict");
	size_t n = alen(ser);

	if (!strcmp(v, "no steps"))
		return;
	fprintf(o->f, "\n  %sSteps:%s %" PRId64 " step marks; live at the boundaries:", C(o, BOLD),
		C(o, OFF), geti(st, "count"));
	for (size_t i = 0; i < n; i++) {
		if (n > 8 && i == 4) {
			fprintf(o->f, " ...");
			i = n - 4;
		}
		fprintf(o->f, " %s%s (step %" PRId64 ")", i ? "" : "", szj(at(ser, i), "live"),
			geti(at(ser, i), "step"));
		if (i + 1 < n)
			fputc(',', o->f);
	}
	fputc('\n', o->f);
	if (!strcmp(v, "too few steps")) {
		fprintf(o->f, "  Leak: too few steps after the warm-up (%" PRId64 ") to judge\n",
			geti(lk, "warmup_steps"));
		return;
	}
	if (!strcmp(v, "none")) {
		fprintf(o->f, "  Leak: none: from step %" PRId64 " to %" PRId64 " live memory went from "
			"%s to %s\n", geti(lk, "since_step"), geti(lk, "last_step"),
			szj(lk, "live_first"), szj(lk, "live_last"));
		return;
	}
	fprintf(o->f, "  %sLeak: +%s per step%s since step %" PRId64 "%s (grew at %" PRId64 " of %" PRId64
		" steps, fit R² %.3f)\n", C(o, RED), sz((uint64_t)getd(lk, "rate_per_step")),
		get(lk, "rate_per_second") ? "" : "", geti(lk, "since_step"), C(o, OFF),
		geti(lk, "grew"), geti(lk, "grew") + geti(lk, "shrank") + geti(lk, "flat"),
		getd(lk, "r2"));
	if (get(lk, "steps_until_full"))
		fprintf(o->f, "  at this rate the device is full in about %.0f more steps%s%s%s\n",
			getd(lk, "steps_until_full"), get(lk, "rate_per_second") ? " (" : "",
			get(lk, "rate_per_second") ? sz((uint64_t)getd(lk, "rate_per_second")) : "",
			get(lk, "rate_per_second") ? "/s)" : "");
	{
		struct json_object *sv = get(lk, "survivors");

		if (sv) {
			fprintf(o->f, "  still live at step %" PRId64 ": %s made in steps %" PRId64 "-%" PRId64
				" (%s per step, %" PRId64 " allocations)\n", geti(lk, "last_step"),
				szj(sv, "bytes"), geti(sv, "from_step"), geti(sv, "to_step"),
				sz((uint64_t)getd(sv, "per_step")), geti(sv, "allocations"));
			layers(o, get(sv, "by_layer"), "    ", torch);
			groups(o, get(sv, "by_phase"), "by phase (when made)", "phase", "    ");
			groups(o, get(sv, "by_op"), "by op", "op", "    ");
		}
	}
}

static void ooms(const struct out *o, struct json_object *d, int torch)
{
	struct json_object *arr = get(d, "ooms");
	int64_t count = geti(d, "oom_count");

	if (!count)
		return;
	fprintf(o->f, "\n  %sOut of memory: %" PRId64 " failed allocation%s%s\n", C(o, RED), count,
		count > 1 ? "s" : "", C(o, OFF));
	for (size_t i = 0; i < alen(arr); i++) {
		struct json_object *e = at(arr, i), *adv = get(e, "advice");
		const char *layer = gets(e, "layer"), *op = gets(e, "op");

		fprintf(o->f, "  %s#%zu at %s%s%s%s%s: %s of %s failed%s\n", C(o, BOLD),
			json_object_get_boolean(get(e, "detailed")) ? i + 1 : (size_t)count, when(e),
			layer ? ", in " : "", layer ? layer : "", op ? ", op " : "", op ? op : "",
			gets(e, "api") ? gets(e, "api") : "allocation", szj(e, "request"), C(o, OFF));
		if (get(e, "free"))
			fprintf(o->f, "    the device had %s free of %s;", szj(e, "free"), szj(e, "total"));
		else
			fprintf(o->f, "   ");
		fprintf(o->f, " this process held %s", szj(e, "device_total"));
		if (torch)
			fprintf(o->f, " (PyTorch %s, other %s)", szj(e, "allocated"), szj(e, "other"));
		if (get(e, "outside_trace"))
			fprintf(o->f, "; %s in use outside this trace", szj(e, "outside_trace"));
		fputc('\n', o->f);
		if (geti(e, "retries") || geti(e, "released_after") ||
		    json_object_get_boolean(get(e, "recovered")))
			fprintf(o->f, "    then: %" PRId64 " retr%s of the same request%s%s%s; %s\n",
				geti(e, "retries"), geti(e, "retries") == 1 ? "y" : "ies",
				geti(e, "released_after") ? ", after releasing " : "",
				geti(e, "released_after") ? szj(e, "released_after") : "",
				geti(e, "released_after") ? " of cached memory" : "",
				json_object_get_boolean(get(e, "recovered")) ? "it then succeeded"
									    : "it did not succeed");
		if (json_object_get_boolean(get(e, "detailed"))) {
			fprintf(o->f, "    live at that moment: %s in %" PRId64 " allocations\n",
				szj(e, "live_bytes"), geti(e, "live_allocations"));
			describe(o, e, "    ", torch);
		}
		if (alen(adv))
			fputc('\n', o->f);
		for (size_t k = 0; k < alen(adv); k++)
			fprintf(o->f, "    %sadvice:%s %s\n", C(o, YEL), C(o, OFF),
				gs(at(adv, k), "text"));
		if (torch && !alen(adv))
			fprintf(o->f, "    advice: none that this trace supports\n");
	}
}

static void device(const struct out *o, struct json_object *d)
{
	const char *name = gets(d, "name");
	int torch = strcmp(gs(d, "mode"), "cuda") != 0;

	fprintf(o->f, "\n%sGPU %" PRId64 " of process %" PRId64 ": %s", C(o, BOLD), geti(d, "device"),
		geti(d, "pid"), name ? name : "(unnamed device)");
	if (get(d, "capacity"))
		fprintf(o->f, ", %s", szj(d, "capacity"));
	fprintf(o->f, "%s\n", C(o, OFF));
	summary(o, d);
	peak(o, d, torch);
	leak(o, d, torch);
	ooms(o, d, torch);
}

static void gpus(const struct out *o, struct json_object *doc)
{
	struct json_object *arr = get(doc, "gpus");

	for (size_t i = 0; i < alen(arr); i++) {
		struct json_object *g = at(arr, i), *by = get(g, "by_process");

		fprintf(o->f, "\n%sGPU %s (%s): shared by %zu processes%s\n", C(o, BOLD), gs(g, "uuid"),
			gets(g, "name") ? gs(g, "name") : "?", alen(by), C(o, OFF));
		fprintf(o->f, "  peak together: %s at %.3f s:", szj(g, "peak"), getd(g, "peak_t"));
		for (size_t k = 0; k < alen(by); k++)
			fprintf(o->f, "%s process %" PRId64 " %s", k ? "," : "", geti(at(by, k), "pid"),
				szj(at(by, k), "bytes"));
		fputc('\n', o->f);
	}
}

int an_text_render(struct json_object *doc, FILE *f, int color, int top)
{
	struct out o = { f, color, top };
	struct json_object *devs = get(doc, "devices");

	traces(&o, doc);
	if (!alen(devs))
		fprintf(f, "\nno GPU memory activity in %s\n",
			alen(get(doc, "traces")) > 1 ? "these traces" : "this trace");
	for (size_t i = 0; i < alen(devs); i++)
		device(&o, at(devs, i));
	gpus(&o, doc);
	return ferror(f) ? -EIO : 0;
}
