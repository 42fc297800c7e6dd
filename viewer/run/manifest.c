/* A launcher's manifest (MANIFEST.md): written by `gpuprof --trace` once its
 * program has ended, read back, checked, by gp_run_open() (open.c). */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporters/out_file.h"
#include "exporters/trace_names.h"
#include "manifest.h"
#include "run.h"

void gp_run_job_id(char *buf, size_t cap, const char *host, pid_t pid, int64_t start_unix_ns)
{
	const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
	char h[GP_RUN_HOST_MAX + 1];

	/* every task of one srun step: one run, on however many hosts */
	if (job && *job && strlen(job) < 64) {
		snprintf(buf, cap, "slurm.%s.%s", job, step && *step && strlen(step) < 32 ? step : "-");
		return;
	}
	gp_run_host_name(h, sizeof(h), host);
	snprintf(buf, cap, "%s.%ld.%lld", h, (long)pid, (long long)start_unix_ns);
}

static int add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_num(struct json_object *o, const char *key, int64_t v)
{
	return v < 0 ? 0 : add(o, key, json_object_new_int64(v));
}

static struct json_object *trace_entry(const struct gp_run_found *f)
{
	struct json_object *t = json_object_new_object();
	const char *slash = strrchr(f->path, '/');
	const struct gp_tr_meta *m = f->meta;
	struct stat st;

	if (!t)
		return NULL;
	if (add(t, MF_FILE, json_object_new_string(slash ? slash + 1 : f->path)) ||
	    add_num(t, MF_PID, m->pid) || add_num(t, MF_RANK, m->rank) ||
	    add_num(t, MF_WORLD_SIZE, m->world_size) || add_num(t, MF_LOCAL_RANK, m->local_rank) ||
	    add_num(t, MF_LOCAL_WORLD_SIZE, m->local_world_size) ||
	    add(t, MF_HOST, json_object_new_string(m->host)) ||
	    add_num(t, MF_BYTES, stat(f->path, &st) == 0 ? (int64_t)st.st_size : -1) ||
	    add(t, MF_COMPLETE, json_object_new_boolean(f->complete))) {
		json_object_put(t);
		return NULL;
	}
	return t;
}

int gp_run_write_manifest(const char *dir, const struct gp_run_launch_info *l,
			  const struct gp_run_found *found, size_t nfound, char *err, size_t cap)
{
	struct json_object *doc = json_object_new_object(), *cmd = json_object_new_array(),
			   *traces = json_object_new_array();
	char name[GP_RUN_HOST_MAX + 64], *path = NULL;
	struct gp_out_file out = { .fd = -1 };
	const char *text;
	int rc = -ENOMEM;
	size_t len;

	if (!doc || !cmd || !traces)
		goto cleanup;
	for (size_t i = 0; l->argv[i]; i++)
		if (json_object_array_add(cmd, json_object_new_string(l->argv[i])))
			goto cleanup;
	for (size_t i = 0; i < nfound; i++) {
		struct json_object *t = trace_entry(&found[i]);

		if (!t || json_object_array_add(traces, t)) {
			json_object_put(t);
			goto cleanup;
		}
	}
	rc = -ENOMEM;
	if (add(doc, MF_SCHEMA, json_object_new_string(GP_RUN_SCHEMA)) ||
	    add(doc, MF_VERSION, json_object_new_string(GPUPROF_VERSION)) ||
	    add(doc, MF_JOB, json_object_new_string(l->job)) ||
	    add(doc, MF_HOST, json_object_new_string(l->host)) ||
	    add_num(doc, MF_LAUNCHER_PID, l->pid) || add(doc, MF_COMMAND, json_object_get(cmd)) ||
	    (l->cwd && add(doc, MF_CWD, json_object_new_string(l->cwd))) ||
	    add_num(doc, MF_START, l->start_unix_ns) || add_num(doc, MF_END, l->end_unix_ns) ||
	    (l->signal ? add_num(doc, MF_SIGNAL, l->signal) : add_num(doc, MF_EXIT, l->exit_status)) ||
	    add(doc, MF_TRACES, json_object_get(traces)))
		goto cleanup;
	rc = gp_run_manifest_name(name, sizeof(name), l->host, l->pid);
	if (rc || asprintf(&path, "%s/%s", dir, name) < 0) {
		path = NULL;
		rc = rc ? rc : -ENOMEM;
		snprintf(err, cap, "%s: cannot name the manifest: %s", dir, strerror(-rc));
		goto cleanup;
	}
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		goto cleanup;
	len = strlen(text);
	/* this launcher's own manifest (its host and pid): replaced if there */
	rc = gp_out_open(&out, path, 1, 0644, err, cap);
	if (rc)
		goto cleanup;
	errno = 0;
	if (write(out.fd, text, len) != (ssize_t)len || write(out.fd, "\n", 1) != 1) {
		rc = errno ? -errno : -EIO;
		snprintf(err, cap, "cannot write %s: %s", path, strerror(-rc));
		goto cleanup;
	}
	rc = gp_out_commit(&out, err, cap);
	if (rc)
		goto cleanup;
	rc = 0;
cleanup:
	if (rc == -ENOMEM && !err[0])
		snprintf(err, cap, "out of memory");
	json_object_put(cmd);
	json_object_put(traces);
	json_object_put(doc);
	gp_out_abandon(&out);
	free(path);
	return rc;
}

/* ---- reading ---- */

static int bad(const char *file, char *err, size_t cap, const char *what)
{
	snprintf(err, cap, "%s: %s", file, what);
	return -EINVAL;
}

static int get(struct json_object *o, const char *key, json_type type, struct json_object **v)
{
	return json_object_object_get_ex(o, key, v) && json_object_is_type(*v, type) ? 0 : -1;
}

static int get_i64(struct json_object *o, const char *key, int64_t min, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		*out = -1;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) || (*out = json_object_get_int64(v)) < min)
		return -1;
	return 0;
}

/* A name in the directory: no path, nothing hidden, a trace's ending. */
static int plain_trace_name(const char *s)
{
	size_t n = strlen(s), sfx = strlen(GP_TRACE_SUFFIX);

	return n > sfx && n < 256 && s[0] != '.' && !strchr(s, '/') &&
	       strcmp(s + n - sfx, GP_TRACE_SUFFIX) == 0;
}

static char *dup_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return get(o, key, json_type_string, &v) ? NULL : strdup(json_object_get_string(v));
}

int mf_parse(const char *file, const char *text, size_t len, struct mf *out, char *err, size_t cap)
{
	struct json_tokener *tok = json_tokener_new_ex(16);
	struct json_object *doc = NULL, *v, *traces;
	int64_t x;
	int rc = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (!tok)
		return -ENOMEM;
	doc = json_tokener_parse_ex(tok, text, (int)len);
	if (!doc || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)len) {
		/* trailing blanks are fine */
		size_t at = doc ? (size_t)tok->char_offset : len;

		while (doc && at < len && strchr(" \t\r\n", text[at]))
			at++;
		if (!doc || at != len) {
			rc = bad(file, err, cap, "not a gpuprof manifest (not one JSON object)");
			goto cleanup;
		}
	}
	if (!json_object_is_type(doc, json_type_object) || get(doc, MF_SCHEMA, json_type_string, &v) ||
	    strcmp(json_object_get_string(v), GP_RUN_SCHEMA) != 0) {
		rc = bad(file, err, cap, "not a gpuprof manifest (no \"schema\": \"" GP_RUN_SCHEMA "\")");
		goto cleanup;
	}
	rc = -ENOMEM;
	out->launch.job = dup_str(doc, MF_JOB);
	out->launch.host = dup_str(doc, MF_HOST);
	if (!out->launch.job || !out->launch.host || !*out->launch.job) {
		rc = bad(file, err, cap, "\"job\" and \"host\" must be strings");
		goto cleanup;
	}
	if (get_i64(doc, MF_LAUNCHER_PID, 1, &out->launch.pid) ||
	    get_i64(doc, MF_START, 0, &out->launch.start_unix_ns) ||
	    get_i64(doc, MF_END, 0, &out->launch.end_unix_ns) || get_i64(doc, MF_EXIT, 0, &x) ||
	    x > 255 || (out->launch.exit_status = (int)x, get_i64(doc, MF_SIGNAL, 1, &x)) || x > 64) {
		rc = bad(file, err, cap, "launcher_pid, start_unix_ns, end_unix_ns, exit_status or "
			 "signal is not a number in range");
		goto cleanup;
	}
	out->launch.signal = x > 0 ? (int)x : 0;
	if (out->launch.signal)
		out->launch.exit_status = -1;
	if (!get(doc, MF_COMMAND, json_type_array, &v)) {
		size_t n = json_object_array_length(v), total = 1;

		for (size_t i = 0; i < n; i++) {
			struct json_object *a = json_object_array_get_idx(v, i);

			if (!json_object_is_type(a, json_type_string)) {
				rc = bad(file, err, cap, "\"command\" is not an array of strings");
				goto cleanup;
			}
			total += (size_t)json_object_get_string_len(a) + 1;
		}
		out->launch.command = malloc(total);
		if (!out->launch.command)
			goto cleanup;
		out->launch.command[0] = '\0';
		for (size_t i = 0; i < n; i++) {
			if (i)
				strcat(out->launch.command, " ");
			strcat(out->launch.command,
			       json_object_get_string(json_object_array_get_idx(v, i)));
		}
	}
	if (get(doc, MF_TRACES, json_type_array, &traces)) {
		rc = bad(file, err, cap, "\"traces\" is not an array");
		goto cleanup;
	}
	out->n = json_object_array_length(traces);
	if (out->n > GP_RUN_MAX_TRACES) {
		rc = bad(file, err, cap, "lists more traces than a run may have");
		goto cleanup;
	}
	out->t = calloc(out->n ? out->n : 1, sizeof(*out->t));
	if (!out->t)
		goto cleanup;
	for (size_t i = 0; i < out->n; i++) {
		struct json_object *t = json_object_array_get_idx(traces, i);
		struct mf_trace *m = &out->t[i];

		if (!json_object_is_type(t, json_type_object) || get(t, MF_FILE, json_type_string, &v) ||
		    !plain_trace_name(json_object_get_string(v))) {
			snprintf(err, cap, "%s: traces[%zu]: \"file\" must name a trace (*%s) in the "
				 "directory itself", file, i, GP_TRACE_SUFFIX);
			rc = -EINVAL;
			goto cleanup;
		}
		m->file = strdup(json_object_get_string(v));
		if (!m->file)
			goto cleanup;
		if (get_i64(t, MF_PID, 1, &m->pid) || m->pid < 1 || get_i64(t, MF_RANK, 0, &m->rank)) {
			snprintf(err, cap, "%s: traces[%zu]: \"pid\" and \"rank\" must be whole numbers",
				 file, i);
			rc = -EINVAL;
			goto cleanup;
		}
		m->complete = get(t, MF_COMPLETE, json_type_boolean, &v) ? -1 :
									       json_object_get_boolean(v);
	}
	rc = 0;
cleanup:
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	if (rc)
		mf_free(out);
	json_object_put(doc);
	json_tokener_free(tok);
	return rc;
}

void mf_free(struct mf *m)
{
	free(m->launch.job);
	free(m->launch.host);
	free(m->launch.command);
	free(m->launch.manifest);
	for (size_t i = 0; m->t && i < m->n; i++)
		free(m->t[i].file);
	free(m->t);
	memset(m, 0, sizeof(*m));
}
