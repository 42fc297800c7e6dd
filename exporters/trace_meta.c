/* A trace's gpuprof.meta, see trace_meta.h. */
#include "trace_meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "in_file.h"
#include "trace_format.h"
#include "trace_reader.h"
#include "trace_scan.h"

/* The recorder's meta line is well under this (its command line is cut at
 * 4 KiB); more is not a gpuprof trace. */
#define META_MAX 65536

static int64_t get_int(const struct gp_json_val *v)
{
	int64_t x;

	return gp_jv_i64(v, &x) ? -1 : x;
}

/* root_pid is written as a string (the environment's value). */
static int64_t get_int_or_str(const struct gp_json_val *v)
{
	char tmp[32];
	char *end;
	long long x;

	if (v->type == GP_JSON_NUM)
		return get_int(v);
	if (v->type != GP_JSON_STR || v->esc || v->n == 0 || v->n >= sizeof(tmp))
		return -1;
	memcpy(tmp, v->p, v->n);
	tmp[v->n] = '\0';
	errno = 0;
	x = strtoll(tmp, &end, 10);
	return errno || end == tmp || *end || x < 0 ? -1 : x;
}

static void get_str(const struct gp_json_val *v, char *buf, size_t cap)
{
	char *scratch;
	const char *s;
	size_t n;

	buf[0] = '\0';
	if (v->type != GP_JSON_STR || !(scratch = malloc(v->n + 1)))
		return;
	if (gp_jv_str(v, scratch, &s, &n) == 0)
		snprintf(buf, cap, "%.*s", (int)n, s);
	free(scratch);
}

/* Trims blanks at both ends. */
static void trim(const char **p, size_t *n)
{
	while (*n && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t'))
		(*n)--;
	while (*n && ((*p)[0] == ' ' || (*p)[0] == '\t')) {
		(*p)++;
		(*n)--;
	}
}

/* The next line with something on it: 1, or 0 at the end. */
static int next_line(struct gp_tr *r, const char **p, size_t *n)
{
	int rc;

	while ((rc = gp_tr_line(r, p, n)) == 1) {
		trim(p, n);
		if (*n)
			return 1;
	}
	return rc < 0 ? rc : 0;
}

/* m from the scanned meta line l. 0, or -EINVAL with err set. */
static int decode(const char *path, const struct gp_tr_members *l, struct gp_tr_meta *m, char *err,
		  size_t cap)
{
	const struct gp_json_val *a = l->args;

	if (GP_JV_IS(&l->top[TK_NAME], GP_MERGE_EVENT)) {
		snprintf(err, cap, "%s: " GP_MERGE_NOT_A_TRACE, path);
		return -EINVAL;
	}
	if (!GP_JV_IS(&l->top[TK_NAME], GP_EV_META) || l->top[TK_ARGS].type != GP_JSON_OBJ) {
		snprintf(err, cap, "%s: not a gpuprof trace (it does not begin with gpuprof.meta)", path);
		return -EINVAL;
	}
	m->pid = get_int(&a[AK_PID]);
	m->ts_base_ns = get_int(&a[AK_TS_BASE_NS]);
	if (m->pid <= 0 || m->ts_base_ns < 0) {
		snprintf(err, cap, "%s: gpuprof.meta has no pid or ts_base_ns", path);
		return -EINVAL;
	}
	m->ppid = get_int(&a[AK_PPID]);
	m->root_pid = get_int_or_str(&a[AK_ROOT_PID]);
	m->rank = get_int(&a[AK_RANK]);
	m->world_size = get_int(&a[AK_WORLD_SIZE]);
	m->local_rank = get_int(&a[AK_LOCAL_RANK]);
	m->local_world_size = get_int(&a[AK_LOCAL_WORLD_SIZE]);
	m->start_unix_ns = get_int(&a[AK_START_UNIX_NS]);
	m->job_start_unix_ns = get_int(&a[AK_JOB_START_UNIX_NS]);
	get_str(&a[AK_HOSTNAME], m->host, sizeof(m->host));
	get_str(&a[AK_MODE], m->mode, sizeof(m->mode));
	return 0;
}

int gp_tr_read_meta(const char *path, struct gp_tr_meta *m, char *err, size_t cap)
{
	struct gp_tr_members *l = NULL;
	struct gp_tr *r;
	const char *p, *why;
	size_t n;
	int rc;

	memset(m, 0, sizeof(*m));
	m->pid = m->ppid = m->root_pid = m->rank = m->world_size = -1;
	m->local_rank = m->local_world_size = m->start_unix_ns = m->job_start_unix_ns = -1;
	m->ts_base_ns = -1;
	rc = gp_tr_open_file(&r, path);
	if (rc) {
		snprintf(err, cap, "%s: %s", path, gp_in_strerror(rc));
		return rc;
	}
	gp_tr_set_threads(r, 0); /* a look at the first lines: one plain stream, no chunk */
	rc = next_line(r, &p, &n);
	if (rc <= 0) {
		if (rc == -ENOMEM || rc == -EIO) {
			snprintf(err, cap, "%s: %s", path,
				 strerror(rc == -EIO && gp_tr_state(r)->io_errno ? gp_tr_state(r)->io_errno : -rc));
		} else {
			snprintf(err, cap, "%s: %s", path,
				 gp_tr_state(r)->gzip_damaged ? "not a gpuprof trace (unreadable gzip)"
							      : "empty");
			rc = -EINVAL;
		}
		goto out;
	}
	rc = -EINVAL;
	/* "[", then the event, on its own line (the recorder's) or after it */
	if (p[0] != '[')
		goto bad;
	p++;
	n--;
	trim(&p, &n);
	if (!n && next_line(r, &p, &n) != 1)
		goto bad;
	if (n > META_MAX)
		goto bad;
	if (p[n - 1] == ',')
		n--;
	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, cap, "%s: %s", path, strerror(ENOMEM));
		rc = -ENOMEM;
		goto out;
	}
	if (gp_tr_scan_line(p, n, l, &why))
		goto bad;
	rc = decode(path, l, m, err, cap);
	goto out;
bad:
	snprintf(err, cap, "%s: not a gpuprof trace (it does not begin with gpuprof.meta)", path);
out:
	free(l);
	gp_tr_close(r);
	return rc;
}
