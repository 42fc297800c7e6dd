/* A trace's gpuprof.meta: its first event, on its first line (the recorder
 * writes it so; TRACE_FORMAT.md), read without reading the rest. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "exporters/in_file.h"
#include "exporters/trace_format.h"
#include "run.h"

/* The recorder's meta line is well under this (its command line is cut at
 * 4 KiB); more is not a gpuprof trace. */
#define META_MAX 65536

static int64_t get_int(struct json_object *args, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return json_object_get_int64(v);
}

/* root_pid is written as a string (the environment's value). */
static int64_t get_int_or_str(struct json_object *args, const char *key)
{
	struct json_object *v;
	const char *s;
	char *end;
	long long x;

	if (!json_object_object_get_ex(args, key, &v))
		return -1;
	if (json_object_is_type(v, json_type_int))
		return json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_string))
		return -1;
	s = json_object_get_string(v);
	errno = 0;
	x = strtoll(s, &end, 10);
	return errno || end == s || *end || x < 0 ? -1 : x;
}

static void get_str(struct json_object *args, const char *key, char *buf, size_t cap)
{
	struct json_object *v;

	buf[0] = '\0';
	if (json_object_object_get_ex(args, key, &v) && json_object_is_type(v, json_type_string))
		snprintf(buf, cap, "%s", json_object_get_string(v));
}

int gp_run_read_meta(const char *path, struct gp_run_meta *m, char *err, size_t cap)
{
	struct json_object *o = NULL, *args, *v;
	gzFile gz;
	char *buf, *start, *end;
	int n, fd, rc = -EINVAL;

	memset(m, 0, sizeof(*m));
	m->pid = m->ppid = m->root_pid = m->rank = m->world_size = -1;
	m->local_rank = m->local_world_size = m->start_unix_ns = m->job_start_unix_ns = -1;
	m->ts_base_ns = -1;
	buf = malloc(META_MAX + 1);
	if (!buf)
		return -ENOMEM;
	/* a regular file only: a FIFO would block the reader */
	fd = gp_in_open(path);
	gz = fd >= 0 ? gzdopen(fd, "rb") : NULL; /* fd handed over */
	if (!gz) {
		free(buf);
		rc = fd < 0 ? fd : -ENOMEM;
		if (fd >= 0)
			close(fd);
		snprintf(err, cap, "%s: %s", path, gp_in_strerror(rc));
		return rc;
	}
	n = gzread(gz, buf, META_MAX);
	gzclose(gz);
	if (n <= 0) {
		snprintf(err, cap, "%s: %s", path, n == 0 ? "empty" : "not a gpuprof trace (unreadable gzip)");
		free(buf);
		return -EINVAL;
	}
	buf[n] = '\0';
	/* "[\n{...meta...},\n": the array's bracket, then the event */
	start = buf;
	while (*start == ' ' || *start == '\n' || *start == '\r' || *start == '\t')
		start++;
	if (*start != '[')
		goto bad;
	start = strchr(start, '{');
	end = start ? strchr(start, '\n') : NULL;
	if (!end)
		goto bad;
	*end = '\0';
	if (end > start && end[-1] == ',')
		end[-1] = '\0';
	o = json_tokener_parse(start);
	if (o && json_object_object_get_ex(o, GP_T_NAME, &v) &&
	    json_object_is_type(v, json_type_string) &&
	    strcmp(json_object_get_string(v), GP_MERGE_EVENT) == 0) {
		snprintf(err, cap, "%s: " GP_MERGE_NOT_A_TRACE, path);
		goto done;
	}
	if (!o || !json_object_object_get_ex(o, GP_T_NAME, &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), GP_EV_META) != 0 ||
	    !json_object_object_get_ex(o, GP_T_ARGS, &args) ||
	    !json_object_is_type(args, json_type_object))
		goto bad;
	m->pid = get_int(args, GP_F_PID);
	m->ts_base_ns = get_int(args, GP_F_TS_BASE_NS);
	if (m->pid <= 0 || m->ts_base_ns < 0) {
		snprintf(err, cap, "%s: gpuprof.meta has no pid or ts_base_ns", path);
		goto done;
	}
	m->ppid = get_int(args, GP_F_PPID);
	m->root_pid = get_int_or_str(args, GP_F_ROOT_PID);
	m->rank = get_int(args, GP_F_RANK);
	m->world_size = get_int(args, GP_F_WORLD_SIZE);
	m->local_rank = get_int(args, GP_F_LOCAL_RANK);
	m->local_world_size = get_int(args, GP_F_LOCAL_WORLD_SIZE);
	m->start_unix_ns = get_int(args, GP_F_START_UNIX_NS);
	m->job_start_unix_ns = get_int(args, GP_F_JOB_START_UNIX_NS);
	get_str(args, GP_F_HOSTNAME, m->host, sizeof(m->host));
	get_str(args, GP_F_MODE, m->mode, sizeof(m->mode));
	rc = 0;
	goto done;
bad:
	snprintf(err, cap, "%s: not a gpuprof trace (it does not begin with gpuprof.meta)", path);
done:
	json_object_put(o);
	free(buf);
	return rc;
}
