/* The files of one side (BASE, NEW, or check's TRACE) into units.
 *
 * A side is one run: its traces are analyzed together, in this process, by
 * the analyzer library (one clock, as `gpuprof analyze a b c` does), and its
 * summaries are read as they are. What a name means:
 *   a summary     `gpuprof analyze --json` output: a JSON object, gzipped or not
 *   a trace       gpuprof's JSON array, gzipped or not; the traces the
 *                 run's other processes wrote beside it (RUN.PID.json.gz,
 *                 the names `gpuprof --trace` gives them; add_children()
 *                 says which count) come with it, so that one name stands
 *                 for the whole run
 *   a directory   a run directory's traces, as its manifests list them
 *                 (viewer/run/); without a manifest, every *.json and
 *                 *.json.gz in it (not below)
 * The same file named twice is read once. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "analyze.h"
#include "viewer/render/term.h"
#include "exporters/in_file.h"
#include "exporters/trace_reader.h"
#include "exporters/trace_format.h"
#include "exporters/trace_names.h"
#include "cmp.h"
#include "viewer/run/run.h"

#define MAX_SUMMARY (512u << 20)
#define JSON_DEPTH 160   /* analyze's layer trees go 48 levels down, 2 JSON levels each */
#define TRACE_TOP 100    /* allocations kept per peak: the more, the more compare can match */

enum kind { TRACE, SUMMARY };

struct file {
	char *path;
	dev_t dev;
	ino_t ino;
	enum kind kind;
	int named; /* given as such, not found in a directory */
};

struct files {
	struct file *f;
	size_t n, cap;
};

static void files_free(struct files *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->f[i].path);
	free(fs->f);
}

/* Adds path unless that file is there already; returns 0, 1 (there
 * already) or -errno, with err set for anything but -ENOMEM. */
static int file_add(struct files *fs, const char *path, int named, char *err, size_t cap)
{
	struct stat st;

	if (stat(path, &st)) {
		int e = errno;

		snprintf(err, cap, "%s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		snprintf(err, cap, "%s: not a regular file or a directory", path);
		return -EINVAL;
	}
	for (size_t i = 0; i < fs->n; i++)
		if (fs->f[i].dev == st.st_dev && fs->f[i].ino == st.st_ino)
			return 1;
	if (fs->n == fs->cap) {
		size_t c = fs->cap ? fs->cap * 2 : 8;
		struct file *f = realloc(fs->f, c * sizeof(*f));

		if (!f)
			return -ENOMEM;
		fs->f = f;
		fs->cap = c;
	}
	fs->f[fs->n] = (struct file){ strdup(path), st.st_dev, st.st_ino, TRACE, named };
	if (!fs->f[fs->n].path)
		return -ENOMEM;
	fs->n++;
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && strcmp(s + n - t, tail) == 0;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *p = malloc(n + strlen(name) + 2);

	if (p)
		sprintf(p, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
	return p;
}

/* The names in dir that keep(name, base) wants (gp_run_list: sorted, so
 * that a report lists a directory's files the same way every time), each
 * as dir/name. */
static int list_dir(const char *dir, const char *base, int (*keep)(const char *, const void *),
		    char ***out, size_t *nout, char *err, size_t cap)
{
	int rc = gp_run_list(dir, keep, base, out, nout, err, cap);

	for (size_t i = 0; !rc && i < *nout; i++) {
		char *p = join(dir, (*out)[i]);

		free((*out)[i]);
		(*out)[i] = p;
		if (!p) {
			gp_run_paths_free(*out, *nout);
			*out = NULL;
			*nout = 0;
			rc = -ENOMEM;
		}
	}
	return rc;
}

static int keep_json(const char *name, const void *base)
{
	(void)base;
	return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

static int keep_child(const char *name, const void *base)
{
	return gp_child_trace_pid(base, name) > 0;
}

/* A run directory with manifests (viewer/run/MANIFEST.md): the traces they
 * list, checked, and its notes (a rank that left no trace). 1 when dir
 * has no manifest: read as any directory. */
static int add_run(struct files *fs, const char *dir, struct cmp_notes *notes, const char *label,
		   char *err, size_t cap)
{
	struct gp_run *run = NULL;
	int rc = gp_run_open(dir, &run, err, cap);

	if (rc == -ENOENT || (!rc && !run->job)) {
		gp_run_free(run);
		err[0] = '\0';
		return 1;
	}
	if (rc)
		return rc;
	for (size_t i = 0; i < run->nnotes && rc >= 0; i++)
		rc = cmp_note(notes, "%s: %s", label, run->notes[i]);
	for (size_t i = 0; i < run->ntraces && rc >= 0; i++)
		rc = file_add(fs, run->traces[i].path, 0, err, cap);
	gp_run_free(run);
	return rc < 0 ? rc : 0;
}

static int add_dir(struct files *fs, const char *dir, struct cmp_notes *notes, const char *label,
		   char *err, size_t cap)
{
	char **v;
	size_t n, added = 0;
	int rc = add_run(fs, dir, notes, label, err, cap);

	if (rc <= 0)
		return rc;
	rc = list_dir(dir, NULL, keep_json, &v, &n, err, cap);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		struct stat st;

		/* a subdirectory named x.json is not an input */
		if (stat(v[i], &st) || !S_ISREG(st.st_mode))
			continue;
		rc = file_add(fs, v[i], 0, err, cap);
		added += rc >= 0;
	}
	gp_run_paths_free(v, n);
	if (rc >= 0 && !added) {
		snprintf(err, cap, "%s: no traces or summaries (*.json, *.json.gz) in it", dir);
		return -ENOENT;
	}
	return rc < 0 ? rc : 0;
}

/* A trace is gzip, or JSON that starts with '['; a summary, JSON that starts
 * with '{'. Only the first line is read (exporters/trace_reader.h): traces
 * can be gigabytes. */
static int sniff(struct file *f, char *err, size_t cap)
{
	struct gp_tr *r;
	const char *p = NULL;
	size_t n = 0;
	int rc = gp_tr_open_file(&r, f->path); /* a regular file only: a FIFO would block */

	if (rc) {
		snprintf(err, cap, "%s: %s", f->path, gp_in_strerror(rc));
		return rc;
	}
	gp_tr_set_threads(r, 0); /* a look at the start: one plain stream, no chunk */
	while ((rc = gp_tr_line(r, &p, &n)) == 1) {
		while (n && strchr(" \t\r", p[0])) {
			p++;
			n--;
		}
		if (n)
			break;
	}
	if (gp_tr_state(r)->gzip) {
		/* a summary kept gzipped (a CI artifact); anything else that is
		 * gzip goes to analyze, which says best what is wrong with it */
		f->kind = rc == 1 && p[0] == '{' ? SUMMARY : TRACE;
		rc = 0;
	} else if (rc == -EIO) {
		snprintf(err, cap, "%s: read error", f->path);
	} else if (rc == 1 && (p[0] == '[' || p[0] == '{')) {
		f->kind = p[0] == '[' ? TRACE : SUMMARY;
		rc = 0;
	} else if (rc != -ENOMEM) {
		snprintf(err, cap, "%s: %s", f->path,
			 gp_tr_state(r)->bytes_in ? "neither a gpuprof trace nor a `gpuprof analyze --json` summary"
						  : "empty");
		rc = -EINVAL;
	} else {
		snprintf(err, cap, "%s: out of memory", f->path);
	}
	gp_tr_close(r);
	return rc;
}

/* A copy of dirname(path), "." for a bare name. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* From a trace's first event, gpuprof.meta (exporters/trace_meta.h); -EINVAL
 * when that cannot be read. */
static int trace_meta(const char *path, struct gp_tr_meta *m)
{
	char scratch[CMP_ERR];

	return gp_tr_read_meta(path, m, scratch, sizeof(scratch)) ? -EINVAL : 0;
}

/* The traces named RUN.PID.json.gz beside RUN.json.gz that processes of
 * that run wrote: the trace says it is of process PID, on the same host,
 * started after RUN's process. So a second run saved as run.2.json.gz, or
 * a child's trace left from an earlier run with the same name, is not
 * taken (the launcher checks the same by the files' times). */
static int add_children(struct files *fs, size_t i, struct cmp_notes *notes, const char *label,
			char *err, size_t cap)
{
	char *dir = dir_of(fs->f[i].path), *base = NULL, **v = NULL;
	const char *slash = strrchr(fs->f[i].path, '/');
	struct gp_tr_meta root, m;
	size_t n = 0;
	int rc;

	if (!dir)
		return -ENOMEM;
	base = strdup(slash ? slash + 1 : fs->f[i].path);
	rc = base ? list_dir(dir, base, keep_child, &v, &n, err, cap) : -ENOMEM;
	if (rc || !n || trace_meta(fs->f[i].path, &root))
		goto cleanup;
	for (size_t k = 0; k < n && rc >= 0; k++) {
		const char *name = strrchr(v[k], '/') + 1;
		struct stat st;

		if (stat(v[k], &st) || !S_ISREG(st.st_mode))
			continue;
		if (trace_meta(v[k], &m) || m.pid != gp_child_trace_pid(base, name) ||
		    strcmp(m.host, root.host) != 0 || m.start_unix_ns < root.start_unix_ns) {
			if (cmp_note(notes, "%s: %s is named like the trace of a child process of %s, but is "
				     "not one of that run: left out", label, v[k], fs->f[i].path))
				rc = -ENOMEM;
			continue;
		}
		/* "run.json.gz" brings "run.5002.json.gz", not "./run.5002.json.gz" */
		rc = file_add(fs, slash ? v[k] : v[k] + 2, 0, err, cap);
	}
cleanup:
	gp_run_paths_free(v, n);
	free(base);
	free(dir);
	return rc < 0 ? rc : 0;
}

/* torchrun's launcher uses no CUDA, so writes no RUN.json.gz; its
 * workers' RUN.PID.json.gz are there. Say so rather than "no such file". */
static void hint_children(const char *path, char *err, size_t cap)
{
	const char *slash = strrchr(path, '/');
	char *dir = dir_of(path), **v = NULL, scratch[CMP_ERR];
	size_t n = 0, len = strlen(err);

	if (dir && !list_dir(dir, slash ? slash + 1 : path, keep_child, &v, &n, scratch, sizeof(scratch)) &&
	    n)
		snprintf(err + len, cap - len,
			 " (but %s%s is there: give the run's traces, or their directory)",
			 slash ? v[0] : v[0] + 2, n > 1 ? " and more" : "");
	gp_run_paths_free(v, n);
	free(dir);
}

/* The whole file, gunzipped if it is gzip (zlib reads a plain file as it is). */
static int read_all(const char *path, char **out, size_t *len, char *err, size_t cap)
{
	int fd = gp_in_open(path); /* a regular file only: a FIFO would block */
	gzFile gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
	char *buf = NULL;
	size_t n = 0, c = 0;
	int rc = 0;

	*out = NULL;
	if (!gz) {
		rc = fd < 0 ? fd : -ENOMEM;
		if (fd >= 0)
			close(fd);
		snprintf(err, cap, "%s: %s", path, gp_in_strerror(rc));
		return rc;
	}
	for (;;) {
		int got;

		if (n == c) {
			char *p;

			if (c >= MAX_SUMMARY) {
				snprintf(err, cap, "%s: larger than %u MiB: not a summary", path,
					 MAX_SUMMARY >> 20);
				rc = -EFBIG;
				goto cleanup;
			}
			c = c ? c * 2 : 65536;
			if (!(p = realloc(buf, c + 1))) {
				rc = -ENOMEM;
				goto cleanup;
			}
			buf = p;
		}
		got = gzread(gz, buf + n, (unsigned)(c - n));
		if (got < 0) {
			int e;

			snprintf(err, cap, "%s: %s", path, gzerror(gz, &e));
			rc = -EIO;
			goto cleanup;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	buf = NULL;
cleanup:
	free(buf);
	gzclose(gz);
	return rc;
}

/* json-c reads NaN and Infinity even when strict, and 1e999 as infinite:
 * neither is JSON, nor a number any member may hold. */
static int all_finite(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if (!all_finite(json_object_array_get_idx(o, i)))
				return 0;
		return 1;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if (!all_finite(v))
				return 0;
		}
		return 1;
	}
	default:
		return 1;
	}
}

static int parse_json(const char *buf, size_t len, const char *name, struct json_object **out,
		      char *err, size_t cap)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	size_t end;
	int rc = 0;

	*out = NULL;
	if (!len || len > INT_MAX) {
		snprintf(err, cap, "%s: %s", name, len ? "too large" : "empty");
		return -EINVAL;
	}
	if (memchr(buf, '\0', len)) {
		snprintf(err, cap, "%s: holds a NUL byte: not JSON", name);
		return -EINVAL;
	}
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok)
		return -ENOMEM;
	/* strict: no NaN, no single quotes, no trailing commas; UTF-8 checked */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8 |
					    JSON_TOKENER_ALLOW_TRAILING_CHARS);
	*out = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		snprintf(err, cap, "%s: cut short: the JSON ends before it is complete", name);
		rc = -EINVAL;
	} else if (jerr != json_tokener_success) {
		snprintf(err, cap, "%s: not valid JSON at byte %zu: %s", name, end,
			 json_tokener_error_desc(jerr));
		rc = -EINVAL;
	} else {
		for (; end < len; end++) {
			if (!strchr(" \t\r\n", buf[end])) {
				snprintf(err, cap, "%s: text after the JSON value, at byte %zu", name, end);
				rc = -EINVAL;
				break;
			}
		}
	}
	json_tokener_free(tok);
	/* the depth is bounded by JSON_DEPTH, so is this recursion */
	if (!rc && !all_finite(*out)) {
		snprintf(err, cap, "%s: holds NaN, Infinity or a number beyond a double: not JSON", name);
		rc = -EINVAL;
	}
	if (rc) {
		json_object_put(*out);
		*out = NULL;
	}
	return rc;
}

/* side keeps r (handed over, freed here on failure) */
static int keep_result(struct cmp_side *side, struct gp_an_result *r)
{
	struct gp_an_result **v = realloc(side->results, (side->nresults + 1) * sizeof(*v));

	if (!v) {
		gp_an_result_free(r);
		return -ENOMEM;
	}
	side->results = v;
	side->results[side->nresults++] = r;
	return 0;
}

struct note_ctx {
	const char *prog, *label;
};

static void print_note(void *ctx, const char *line)
{
	const struct note_ctx *c = ctx;

	fprintf(stderr, "%s: %s: %s\n", c->prog, c->label, gp_term_str(line));
}

/* The traces of a side, analyzed together in this process, into a result
 * that the side keeps and its units point into (unit.c), as a summary's. */
static int analyze_traces(struct cmp_side *side, const struct files *fs, int device, int progress,
			  const char *prog, char *err, size_t cap)
{
	struct gp_an_input *in = calloc(fs->n, sizeof(*in));
	struct gp_an_settings an = { 0 };
	struct note_ctx nc = { prog, side->label };
	struct gp_an_result *res = NULL;
	char aerr[CMP_ERR] = "";
	size_t n = 0;
	int rc = 0, st;

	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < fs->n; i++)
		if (fs->f[i].kind == TRACE)
			in[n++].path = side->inputs[i]; /* fs->f[i].path moved there */
	if (!n)
		goto cleanup;
	an.inputs = in;
	an.n_inputs = n;
	an.top = TRACE_TOP;
	an.device = -1;
	an.pid = -1;
	an.progress = progress;
	st = gp_an_analyze(&an, &res, aerr, sizeof(aerr), print_note, &nc);
	if (st != GP_AN_OK) {
		snprintf(err, cap, "%s: %s", side->label, aerr[0] ? aerr : "analysis failed");
		rc = st == GP_AN_BAD_INPUT ? -EINVAL : -EIO;
		goto cleanup;
	}
	if ((rc = keep_result(side, res)))
		goto cleanup;
	rc = cmp_units_add(side, res, NULL, device, err, cap);
cleanup:
	free(in);
	return rc;
}

/* A file (gzipped or not) read whole and parsed as strict JSON; *doc the
 * caller's. */
static int read_json(const char *path, struct json_object **doc, char *err, size_t cap)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = read_all(path, &buf, &len, err, cap);

	*doc = NULL;
	if (rc)
		return rc;
	rc = parse_json(buf, len, path, doc, err, cap);
	free(buf);
	return rc;
}

static int load_summary(struct cmp_side *side, const char *path, int device, char *err, size_t cap)
{
	struct json_object *doc;
	struct gp_an_result *res;
	int rc = read_json(path, &doc, err, cap);

	if (rc)
		return rc;
	/* the result holds copies of what it uses: the document goes now */
	rc = cmp_summary_read(side, doc, path, &res, err, cap);
	json_object_put(doc);
	if (rc || (rc = keep_result(side, res)))
		return rc;
	return cmp_units_add(side, res, path, device, err, cap);
}

int gp_cmp_file_is_summary(const char *path, char *err, size_t cap)
{
	struct file f = { .path = (char *)path };
	int rc = sniff(&f, err, cap);

	return rc ? rc : f.kind == SUMMARY;
}

int gp_cmp_read_summary(const char *path, struct json_object **out, char *err, size_t cap)
{
	struct json_object *doc, *schema;
	int rc = read_json(path, &doc, err, cap);

	*out = NULL;
	if (rc)
		return rc;
	if (!json_object_is_type(doc, json_type_object) ||
	    !json_object_object_get_ex(doc, "schema", &schema) ||
	    !json_object_is_type(schema, json_type_string) ||
	    strcmp(json_object_get_string(schema), GP_AN_SCHEMA) != 0) {
		snprintf(err, cap, "%s: not a `gpuprof analyze --json` summary (schema %s)", path, GP_AN_SCHEMA);
		json_object_put(doc);
		return -EINVAL;
	}
	*out = doc;
	return 0;
}

static int same_process(const struct cmp_unit *a, const struct cmp_unit *b)
{
	if (a->dev->pid != b->dev->pid || a->dev->device != b->dev->device || a->tr->start_unix_ns < 0 ||
	    a->tr->start_unix_ns != b->tr->start_unix_ns)
		return 0;
	if (!a->tr->hostname || !b->tr->hostname)
		return a->tr->hostname == b->tr->hostname;
	return strcmp(a->tr->hostname, b->tr->hostname) == 0;
}

int cmp_side_load(struct cmp_side *side, const struct gp_cmp_files *files, int device, int progress,
		  const char *prog, char *err, size_t cap)
{
	struct files fs = { 0 };
	size_t n;
	int rc = 0;

	for (size_t i = 0; i < files->n && rc >= 0; i++) {
		struct stat st;
		const char *p = files->paths[i];

		if (!stat(p, &st) && S_ISDIR(st.st_mode))
			rc = add_dir(&fs, p, &side->notes, side->label, err, cap);
		else if ((rc = file_add(&fs, p, 1, err, cap)) == -ENOENT)
			hint_children(p, err, cap);
	}
	for (size_t i = 0; i < fs.n && rc >= 0; i++)
		rc = sniff(&fs.f[i], err, cap);
	/* children found here are appended after n, and not looked into again */
	n = fs.n;
	for (size_t i = 0; i < n && rc >= 0; i++)
		if (fs.f[i].named && fs.f[i].kind == TRACE)
			rc = add_children(&fs, i, &side->notes, side->label, err, cap);
	for (size_t i = n; i < fs.n && rc >= 0; i++)
		rc = sniff(&fs.f[i], err, cap);
	if (rc < 0)
		goto cleanup;
	side->inputs = calloc(fs.n ? fs.n : 1, sizeof(*side->inputs));
	if (!side->inputs) {
		rc = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < fs.n; i++) {
		side->inputs[side->ninputs++] = fs.f[i].path;
		fs.f[i].path = NULL;
	}
	if ((rc = analyze_traces(side, &fs, device, progress, prog, err, cap)))
		goto cleanup;
	for (size_t i = 0; i < fs.n && !rc; i++)
		if (fs.f[i].kind == SUMMARY)
			rc = load_summary(side, side->inputs[i], device, err, cap);
	if (rc)
		goto cleanup;
	/* the same process twice would count its memory twice */
	for (size_t i = 0; i < side->n; i++) {
		for (size_t j = 0; j < i; j++) {
			if (!same_process(&side->u[i], &side->u[j]))
				continue;
			snprintf(err, cap, "%s: process %lld (GPU %d) is in both %s and %s: give one of them",
				 side->label, (long long)side->u[i].dev->pid, side->u[i].dev->device, side->u[j].input,
				 side->u[i].input);
			rc = -EINVAL;
			goto cleanup;
		}
	}
	for (size_t i = 0; i < side->n; i++) {
		size_t j = 0;

		while (j < i && !(side->u[j].dev->pid == side->u[i].dev->pid &&
				  side->u[j].tr->start_unix_ns == side->u[i].tr->start_unix_ns))
			j++;
		side->nprocs += j == i;
	}
cleanup:
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	files_free(&fs);
	return rc < 0 ? rc : 0;
}

void cmp_side_free(struct cmp_side *s)
{
	for (size_t i = 0; i < s->n; i++)
		cmp_unit_free(&s->u[i]);
	free(s->u);
	for (size_t i = 0; i < s->nresults; i++)
		gp_an_result_free(s->results[i]);
	free(s->results);
	for (size_t i = 0; i < s->ninputs; i++)
		free(s->inputs[i]);
	free(s->inputs);
	cmp_notes_free(&s->notes);
}
