/* A trace's gpuprof.meta, see trace_meta.h. */
#include "trace_meta.h"

#include <errno.h>
#include <inttypes.h>
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

/* The members' checks are every reader's (trace_scan.h); what names the
 * event, "gpuprof.meta event", as analyze's messages name every event.
 * An integer in [0, max] where it may be absent: *out -1 then. */
static int may_u64(const char *what, const struct gp_json_val *v, const char *key, uint64_t max,
		   int64_t *out, char *why, size_t cap)
{
	uint64_t x;
	int r;

	*out = -1;
	if (v->type == GP_JSON_NONE)
		return 0;
	if ((r = gp_tr_need_u64(what, v, key, max, &x, why, cap)))
		return r;
	*out = (int64_t)x;
	return 0;
}

/* A string that may be absent: left where it is, in *out. */
static int may_str(const char *what, const struct gp_json_val *v, const char *key,
		   struct gp_json_val *out, char *why, size_t cap)
{
	*out = *v;
	return gp_tr_check_str(what, v, key, 0, why, cap) < 0 ? -EINVAL : 0;
}

int gp_tr_meta_decode(const struct gp_tr_members *l, struct gp_tr_meta *m, char *why, size_t cap)
{
	const struct gp_json_val *a = l->args;
	char what[32];
	uint64_t x;
	int r;

	memset(m, 0, sizeof(*m));
	snprintf(what, sizeof(what), "%s event", GP_EV_META);
	/* in the order analyze has always checked them: its messages name the
	 * first member wrong */
	if ((r = gp_tr_need_u64(what, &a[AK_FORMAT], GP_F_FORMAT, UINT32_MAX, &x, why, cap)))
		return r;
	m->format = (int64_t)x;
	if (x != 1)
		return gp_tr_why(why, cap, "trace format %" PRIu64 " (this gpuprof reads format 1)", x);
	if ((r = gp_tr_need_u64(what, &a[AK_PID], GP_F_PID, GP_TR_META_PID_MAX, &x, why, cap)))
		return r;
	m->pid = (int64_t)x;
	if ((r = gp_tr_need_u64(what, &a[AK_TS_BASE_NS], GP_F_TS_BASE_NS, GP_TR_META_TS_BASE_MAX, &x,
				why, cap)))
		return r;
	m->ts_base_ns = (int64_t)x;
	/* past 2262 negative: read as uint64_t where has_ says */
	if ((r = may_u64(what, &a[AK_START_UNIX_NS], GP_F_START_UNIX_NS, UINT64_MAX, &m->start_unix_ns,
			 why, cap)))
		return r;
	m->has_start_unix_ns = a[AK_START_UNIX_NS].type != GP_JSON_NONE;
	/* which process of a distributed job this is: -1 where not said */
	if ((r = may_u64(what, &a[AK_RANK], GP_F_RANK, GP_TR_META_JOB_MAX, &m->rank, why, cap)) ||
	    (r = may_u64(what, &a[AK_WORLD_SIZE], GP_F_WORLD_SIZE, GP_TR_META_JOB_MAX, &m->world_size, why,
			 cap)) ||
	    (r = may_u64(what, &a[AK_LOCAL_RANK], GP_F_LOCAL_RANK, GP_TR_META_JOB_MAX, &m->local_rank, why,
			 cap)) ||
	    (r = may_u64(what, &a[AK_LOCAL_WORLD_SIZE], GP_F_LOCAL_WORLD_SIZE, GP_TR_META_JOB_MAX,
			 &m->local_world_size, why, cap)))
		return r;
	if ((r = may_u64(what, &a[AK_JOB_START_UNIX_NS], GP_F_JOB_START_UNIX_NS, UINT64_MAX,
			 &m->job_start_unix_ns, why, cap)))
		return r;
	m->has_job_start_unix_ns = a[AK_JOB_START_UNIX_NS].type != GP_JSON_NONE;
	if ((r = may_str(what, &a[AK_CMDLINE], GP_F_CMDLINE, &m->cmdline_val, why, cap)) ||
	    (r = may_str(what, &a[AK_HOSTNAME], GP_F_HOSTNAME, &m->hostname_val, why, cap)) ||
	    (r = may_str(what, &a[AK_VERSION], GP_F_VERSION, &m->version_val, why, cap)))
		return r;
	m->mode_val = a[AK_MODE];
	if (!GP_JV_IS(&a[AK_STATICS], "none") && a[AK_STATICS].type != GP_JSON_NONE &&
	    !GP_JV_IS(&a[AK_STATICS], "run"))
		return gp_tr_why(why, cap, "%s: \"statics\" is not run or none", GP_EV_META);
	m->statics_none = GP_JV_IS(&a[AK_STATICS], "none");
	m->memory_by_context = GP_JV_IS(&a[AK_MEMORY_DEVICE], "context");
	/* what no analysis relies on, read where it is an integer: the parent,
	 * and the launcher's pid (written as the environment's string) */
	m->ppid = get_int(&a[AK_PPID]);
	m->root_pid = get_int_or_str(&a[AK_ROOT_PID]);
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
	if (GP_JV_IS(&l->top[TK_NAME], GP_MERGE_EVENT)) {
		snprintf(err, cap, "%s: " GP_MERGE_NOT_A_TRACE, path);
		goto out;
	}
	if (!GP_JV_IS(&l->top[TK_NAME], GP_EV_META) || l->top[TK_ARGS].type != GP_JSON_OBJ)
		goto bad;
	{
		char wrong[200];

		rc = gp_tr_meta_decode(l, m, wrong, sizeof(wrong));
		if (rc) {
			snprintf(err, cap, "%s:%" PRIu64 ": %s", path, gp_tr_state(r)->line_no, wrong);
			rc = -EBADMSG; /* a gpuprof trace, but a bad one */
		}
		/* the line goes with the reader */
		memset(&m->cmdline_val, 0, sizeof(m->cmdline_val));
		memset(&m->hostname_val, 0, sizeof(m->hostname_val));
		memset(&m->version_val, 0, sizeof(m->version_val));
		memset(&m->mode_val, 0, sizeof(m->mode_val));
	}
	goto out;
bad:
	snprintf(err, cap, "%s: not a gpuprof trace (it does not begin with gpuprof.meta)", path);
out:
	free(l);
	gp_tr_close(r);
	return rc;
}
