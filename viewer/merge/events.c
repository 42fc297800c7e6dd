/* One trace's lines: read as a stream ("[", one event per line, "]":
 * TRACE_FORMAT.md), every event checked to be one JSON object whose pid,
 * ts and id are numbers, and rewritten into the merged trace by splicing
 * new values over those three in place. Nothing else of an event is
 * re-serialized: what the merge does not know is kept exactly. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/in_file.h"
#include "exporters/json_check.h"
#include "exporters/json_scan.h"
#include "exporters/trace_format.h"
#include "exporters/trace_reader.h"
#include "exporters/trace_scan.h"
#include "internal.h"

#define MAX_NUMBER 64
#define KEY(v, lit) ((v)->n == sizeof(lit) - 1 && !(v)->esc && memcmp((v)->p, lit, (v)->n) == 0)

/* The members of an event the merge reads; type GP_JSON_NONE when absent. */
struct ev {
	struct gp_json_val ph, name, cat, pid, ts, dur, id, args;
	size_t len;  /* the object's text, without the line's ',' */
	int empty;   /* {} */
};

struct reader {
	struct gp_tr *in; /* owned */
	const char *path;
	int opened, closed; /* "[" and "]" seen */
	char *err;
	size_t cap;
};

static int fail_line(struct reader *r, const char *why)
{
	snprintf(r->err, r->cap, "%s: line %" PRIu64 ": %s", r->path, gp_tr_state(r->in)->line_no, why);
	return -EINVAL;
}

/* The stream ended early or turned into garbage: recover keeps what it can. */
static int fail_cut(struct reader *r)
{
	snprintf(r->err, r->cap, "%s: %s; repair it first: gpuprof recover %s", r->path,
		 gp_tr_state(r->in)->gzip_damaged ? "damaged compressed data"
		 : gp_tr_state(r->in)->gzip_cut  ? "cut short (no gzip trailer)"
				   : "cut short (no closing ']')",
		 r->path);
	return -EINVAL;
}

static int reader_open(struct reader *r, const char *path, char *err, size_t cap)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->err = err;
	r->cap = cap;
	rc = gp_tr_open_file(&r->in, path);
	if (rc)
		snprintf(err, cap, "%s: %s", path, gp_in_strerror(rc));
	return rc;
}

static struct gp_json_val *slot_of(struct ev *e, const struct gp_json_val *k)
{
	if (KEY(k, GP_T_PH))
		return &e->ph;
	if (KEY(k, GP_T_NAME))
		return &e->name;
	if (KEY(k, GP_T_CAT))
		return &e->cat;
	if (KEY(k, GP_T_PID))
		return &e->pid;
	if (KEY(k, GP_T_TS))
		return &e->ts;
	if (KEY(k, GP_T_DUR))
		return &e->dur;
	if (KEY(k, GP_T_ID))
		return &e->id;
	if (KEY(k, GP_T_ARGS))
		return &e->args;
	return NULL;
}

/* p[0..n): one object, then at most a ',': the members read into e. */
static const char *scan_event(const char *p, size_t n, struct ev *e)
{
	struct gp_json_cur c = { (const unsigned char *)p, (const unsigned char *)p + n, NULL,
				 GP_JSON_MAX_DEPTH, MAX_NUMBER };
	struct gp_json_val k, v, *slot;

	memset(e, 0, sizeof(*e));
	if (!n || *p != '{')
		return "not a JSON object";
	c.p++;
	gp_json_ws(&c);
	e->empty = c.p < c.end && *c.p == '}';
	if (e->empty)
		c.p++;
	else
		for (;;) {
			if (gp_json_member_name(&c, &k) || gp_json_value(&c, 1, &v))
				return c.why;
			slot = slot_of(e, &k);
			if (slot && slot->type)
				return "a member given twice";
			if (slot)
				*slot = v;
			gp_json_ws(&c);
			if (c.p < c.end && *c.p == ',') {
				c.p++;
				gp_json_ws(&c);
			} else if (c.p < c.end && *c.p == '}') {
				c.p++;
				break;
			} else {
				return "expected ',' or '}' in the object";
			}
		}
	e->len = (size_t)((const char *)c.p - p);
	if (c.p < c.end && *c.p == ',')
		c.p++;
	if (c.p != c.end)
		return "text after the event";
	if (e->pid.type && (e->pid.type != GP_JSON_NUM || (e->pid.num & ~GP_JSON_NEG)))
		return "pid is not an integer";
	if (e->id.type && (e->id.type != GP_JSON_NUM || e->id.num))
		return "id is not an unsigned integer";
	if ((e->ts.type && e->ts.type != GP_JSON_NUM) || (e->dur.type && e->dur.type != GP_JSON_NUM))
		return "ts or dur is not a number";
	if ((e->ts.num | e->dur.num) & GP_JSON_EXP)
		return "ts or dur has an exponent (microseconds with 3 decimals expected)";
	return NULL;
}

/* The next event: 1, 0 at the end of the trace, or -errno (err set). */
static int reader_next(struct reader *r, const char **line, struct ev *e)
{
	const char *p, *why;
	size_t n;
	int rc;

	for (;;) {
		rc = gp_tr_line(r->in, &p, &n);
		if (rc == -EFBIG)
			return fail_line(r, "a line longer than 64 MiB");
		if (rc == -EIO) {
			snprintf(r->err, r->cap, "%s: %s", r->path, strerror(gp_tr_state(r->in)->io_errno));
			return -EIO;
		}
		if (rc < 0)
			return rc;
		if (rc == 0) {
			if (gp_tr_state(r->in)->gzip_cut || gp_tr_state(r->in)->gzip_damaged || !r->closed)
				return fail_cut(r);
			return 0;
		}
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (!n)
			continue;
		if (r->closed)
			return fail_line(r, "text after the closing ']'");
		if (!r->opened) {
			if (n != 1 || *p != '[')
				return fail_line(r, "not a trace ('[' alone on the first line expected)");
			r->opened = 1;
			continue;
		}
		if (n == 1 && *p == ']') {
			r->closed = 1;
			continue;
		}
		why = scan_event(p, n, e);
		/* the half line a killed recorder leaves is no damage of its own */
		if (why && gp_tr_state(r->in)->done &&
		    (gp_tr_state(r->in)->gzip_cut || gp_tr_state(r->in)->gzip_damaged))
			return fail_cut(r);
		if (why)
			return fail_line(r, why);
		*line = p;
		return 1;
	}
}

/* The member key's value inside the object text obj (already checked). */
static int find_member(const struct gp_json_val *obj, const char *key, struct gp_json_val *out)
{
	struct gp_json_cur c = { (const unsigned char *)obj->p,
				 (const unsigned char *)obj->p + obj->n, NULL, GP_JSON_MAX_DEPTH,
				 SIZE_MAX };
	size_t klen = strlen(key);
	struct gp_json_val k;

	if (obj->type != GP_JSON_OBJ)
		return 0;
	c.p++;
	for (;;) {
		gp_json_ws(&c);
		if (c.p >= c.end || *c.p == '}' || gp_json_member_name(&c, &k) ||
		    gp_json_value(&c, 1, out))
			return 0;
		if (k.n == klen && !k.esc && memcmp(k.p, key, klen) == 0)
			return 1;
		gp_json_ws(&c);
		if (c.p < c.end && *c.p == ',')
			c.p++;
	}
}

/* ---- the copy ---- */

/* One replacement in an event's text: [at, at+len) becomes the value. */
enum { R_PID, R_PID_MEMBER, R_TS, R_ID, R_TEXT };
struct rep {
	const char *at;
	size_t len;
	int kind;
	int64_t v;
	const char *text;
};

struct copy {
	struct mg_out *o;
	const struct mg_trace *t;
	struct reader r;
	size_t k, n;
	unsigned char seen[1 + MG_MAX_DEVICES], named[1 + MG_MAX_DEVICES]; /* host, GPUs */
};

static void meta_head(struct gp_buf *b, const char *name, int64_t pid)
{
	gp_buf_puts(b, ",\n{\"ph\":\"M\",\"name\":\"");
	gp_buf_puts(b, name);
	gp_buf_puts(b, "\",\"pid\":");
	gp_buf_i64(b, pid);
	gp_buf_puts(b, ",\"tid\":0,\"ts\":0.000,\"args\":{");
}

/* A process's own words after the prefix (named) or the label: its GPU,
 * its pid. */
static void who(struct gp_buf *b, const struct mg_trace *t, int slot, int named)
{
	if (slot) {
		gp_buf_puts(b, named ? "GPU " : ", GPU ");
		gp_buf_i64(b, slot - 1);
	}
	if (!named)
		return;
	gp_buf_puts(b, slot ? " (pid " : "pid ");
	gp_buf_i64(b, t->meta.pid);
	if (slot)
		gp_buf_putc(b, ')');
}

/* A new pid's first event: Perfetto groups it by its labels and orders
 * the groups by sort index, rank 0's host and GPUs first. */
static void first_seen(struct copy *cp, int slot, int64_t pid)
{
	struct gp_buf *b = &cp->o->buf;

	cp->seen[slot] = 1;
	meta_head(b, GP_EV_PROCESS_SORT_INDEX, pid);
	gp_buf_puts(b, "\"sort_index\":");
	gp_buf_i64(b, pid);
	gp_buf_puts(b, "}}");
	meta_head(b, "process_labels", pid);
	gp_buf_puts(b, "\"labels\":\"");
	gp_buf_puts(b, cp->t->label);
	who(b, cp->t, slot, 0);
	gp_buf_puts(b, "\"}}");
}

static int copy_event(struct copy *cp, const char *line, const struct ev *e)
{
	const struct mg_trace *t = cp->t;
	struct gp_buf *b = &cp->o->buf;
	struct rep reps[5], tmp;
	struct gp_json_val v;
	size_t nr = 0;
	int64_t pid = t->meta.pid, ns;
	uint64_t id;
	int slot = 0;
	const char *at = line;

	if (e->pid.type && gp_jv_i64(&e->pid, &pid))
		return fail_line(&cp->r, "pid out of range");
	if (pid != t->meta.pid) {
		int64_t d;

		if (gp_gpu_pid_device(pid, t->meta.pid, &d) || d >= MG_MAX_DEVICES)
			return fail_line(&cp->r, "a pid neither the process's nor one of its GPUs'");
		slot = 1 + (int)d;
	}
	if (!cp->seen[slot])
		first_seen(cp, slot, t->pid_base + slot);
	if (e->pid.type)
		reps[nr++] = (struct rep){ e->pid.p, e->pid.n, R_PID, t->pid_base + slot, NULL };
	else /* Perfetto would put it in pid 0, beside every other trace's */
		reps[nr++] = (struct rep){ line + 1, 0, R_PID_MEMBER, t->pid_base, e->empty ? "" : "," };
	if (e->ts.type) {
		if (gp_jv_us_to_ns(&e->ts, &ns) || __builtin_add_overflow(ns, t->shift_ns, &ns))
			return fail_line(&cp->r, "ts out of range");
		reps[nr++] = (struct rep){ e->ts.p, e->ts.n, R_TS, ns, NULL };
	}
	if (e->id.type) {
		if (gp_json_digits_u64(e->id.p, e->id.n, MG_MAX_ID, &id) ||
		    id > (MG_MAX_ID - cp->k) / cp->n)
			return fail_line(&cp->r, "an id too large to keep apart from the other "
						 "traces' below 2^53");
		reps[nr++] = (struct rep){ e->id.p, e->id.n, R_ID, (int64_t)(id * cp->n + cp->k), NULL };
	}
	if (e->ph.n == 1 && e->ph.p[0] == 'M' && KEY(&e->name, GP_EV_PROCESS_NAME) &&
	    find_member(&e->args, GP_F_NAME, &v) && v.type == GP_JSON_STR) {
		reps[nr++] = (struct rep){ v.p, 0, R_TEXT, 0, t->prefix };
		cp->named[slot] = 1;
	} else if (e->ph.n == 1 && e->ph.p[0] == 'M' && KEY(&e->name, GP_EV_PROCESS_SORT_INDEX) &&
		   find_member(&e->args, "sort_index", &v) && v.type == GP_JSON_NUM) {
		reps[nr++] = (struct rep){ v.p, v.n, R_PID, t->pid_base + slot, NULL };
	}
	for (size_t i = 1; i < nr; i++) /* in the order of the text */
		for (size_t j = i; j > 0 && reps[j].at < reps[j - 1].at; j--) {
			tmp = reps[j];
			reps[j] = reps[j - 1];
			reps[j - 1] = tmp;
		}
	gp_buf_append(b, ",\n", 2);
	for (size_t i = 0; i < nr; i++) {
		gp_buf_append(b, at, (size_t)(reps[i].at - at));
		switch (reps[i].kind) {
		case R_PID_MEMBER:
			gp_buf_puts(b, "\"pid\":");
			gp_buf_i64(b, reps[i].v);
			gp_buf_puts(b, reps[i].text);
			break;
		case R_TS:
			gp_buf_ns_as_us(b, reps[i].v);
			break;
		case R_TEXT:
			gp_buf_puts(b, reps[i].text);
			break;
		default:
			gp_buf_i64(b, reps[i].v);
		}
		at = reps[i].at + reps[i].len;
	}
	gp_buf_append(b, at, (size_t)(line + e->len - at));
	return 0;
}

int mg_copy_trace(struct mg_out *o, const struct mg_trace *t, size_t k, size_t n,
		  uint64_t *events, char *err, size_t cap)
{
	struct copy *cp = calloc(1, sizeof(*cp));
	const char *line;
	struct ev e;
	int rc;

	if (!cp)
		return -ENOMEM;
	*cp = (struct copy){ .o = o, .t = t, .k = k, .n = n };
	rc = reader_open(&cp->r, t->path, err, cap);
	if (rc)
		goto cleanup;
	while ((rc = reader_next(&cp->r, &line, &e)) == 1) {
		rc = copy_event(cp, line, &e);
		if (!rc)
			rc = mg_out_drain(o, 0);
		if (rc)
			goto cleanup;
		(*events)++;
	}
	if (rc)
		goto cleanup;
	/* a process the trace never named still shows as its rank's */
	for (int slot = 0; slot <= MG_MAX_DEVICES; slot++) {
		if (!cp->seen[slot] || cp->named[slot])
			continue;
		meta_head(&o->buf, GP_EV_PROCESS_NAME, t->pid_base + slot);
		gp_buf_puts(&o->buf, "\"name\":\"");
		gp_buf_puts(&o->buf, t->prefix);
		who(&o->buf, t, slot, 1);
		gp_buf_puts(&o->buf, "\"}}");
	}
	rc = mg_out_drain(o, 0);
cleanup:
	gp_tr_close(cp->r.in);
	free(cp);
	return rc;
}

/* ---- the NCCL kernels, for the clocks ---- */

static int intern(struct mg_names *names, const struct gp_json_val *v, uint32_t *id)
{
	char **nv;

	for (size_t i = 0; i < names->n; i++)
		if (strlen(names->v[i]) == v->n && memcmp(names->v[i], v->p, v->n) == 0) {
			*id = (uint32_t)i;
			return 0;
		}
	nv = realloc(names->v, (names->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	names->v = nv;
	nv[names->n] = strndup(v->p, v->n);
	if (!nv[names->n])
		return -ENOMEM;
	*id = (uint32_t)names->n++;
	return 0;
}

void mg_names_free(struct mg_names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
	names->v = NULL;
	names->n = 0;
}

int mg_collect_kernels(const struct mg_trace *t, struct mg_kernels *ks, struct mg_names *names,
		       char *err, size_t cap)
{
	struct reader r;
	const char *line;
	struct gp_merge_kernel kn;
	struct ev e;
	int64_t ts, dur;
	int rc;

	rc = reader_open(&r, t->path, err, cap);
	while (!rc && (rc = reader_next(&r, &line, &e)) == 1) {
		rc = 0;
		if (e.ph.n != 1 || e.ph.p[0] != 'X' || !KEY(&e.cat, GP_CAT_KERNEL) ||
		    !gp_tr_is_coll_kernel(e.name.p, e.name.n) || !e.ts.type || !e.dur.type ||
		    gp_jv_us_to_ns(&e.ts, &ts) || gp_jv_us_to_ns(&e.dur, &dur) || dur < 0)
			continue;
		if (__builtin_add_overflow(t->meta.ts_base_ns, ts, &kn.start_ns) ||
		    __builtin_add_overflow(kn.start_ns, dur, &kn.end_ns) || kn.start_ns < 0 ||
		    kn.end_ns >= MG_MAX_ABS_NS)
			continue; /* no clock's: not one to align on */
		if (ks->n == ks->cap) {
			size_t c = ks->cap ? ks->cap * 2 : 1024;
			struct gp_merge_kernel *v = realloc(ks->v, c * sizeof(*v));

			if (!v) {
				rc = -ENOMEM;
				break;
			}
			ks->v = v;
			ks->cap = c;
		}
		rc = intern(names, &e.name, &kn.name);
		if (!rc)
			ks->v[ks->n++] = kn;
	}
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	gp_tr_close(r.in);
	return rc;
}
