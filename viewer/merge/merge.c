/* gpuprof merge's run (merge.h): every trace's gpuprof.meta read, the
 * traces put in rank order, their hosts' clocks aligned, then each trace's
 * events copied (events.c) into a temporary file beside the output, which
 * is renamed into place only once whole: a refused input leaves nothing. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporters/out_file.h"
#include "exporters/trace_format.h"
#include "internal.h"

/* zlib level 1: the merge runs at deflate's pace, and level 6 took 1.6
 * times as long for a file an eighth smaller (4M events: 2.1M/s vs 1.3M/s) */
#define OUT_GZ_LEVEL 1

struct host {
	const char *name;
	size_t first;         /* its first trace in order: the one aligned on */
	int64_t offset_ns;
	const char *aligned;
	size_t matched;
	int64_t residual_ns;
	char why[256];
};

struct run {
	const struct gp_merge_settings *s;
	struct mg_trace *t;
	size_t n;
	struct host *hosts;
	size_t nhosts;
	const char *method;
	int64_t base_ns;      /* the merged trace's ts 0 */
	struct gp_out_file out; /* the output, while it is written */
	struct mg_out o;
};

static void note(const struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const struct run *r, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!r->s->note)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->s->note(r->s->ctx, line);
}

/* The run's order (gp_run_meta_order), then by path. */
static int cmp_trace(const void *pa, const void *pb)
{
	const struct mg_trace *a = pa, *b = pb;
	int c = gp_run_meta_order(&a->meta, &b->meta);

	return c ? c : strcmp(a->path, b->path);
}

/* s JSON-escaped, without its quotes, in memory of its own; NULL when out
 * of memory. */
static char *escaped(const char *s)
{
	struct gp_buf b;
	char *out;

	gp_buf_init(&b, 0);
	gp_buf_json_cstr(&b, s);
	out = b.failed ? NULL : strndup(b.data + 1, b.len - 2);
	gp_buf_free(&b);
	return out;
}

static int read_metas(struct run *r, char *err, size_t cap)
{
	for (size_t k = 0; k < r->n; k++) {
		struct mg_trace *t = &r->t[k];
		int rc;

		t->path = r->s->traces[k];
		rc = gp_tr_read_meta(t->path, &t->meta, err, cap);
		/* a bad meta (its pid fits an int32...) is bad input, as none */
		if (rc)
			return rc == -EBADMSG ? -EINVAL : rc;
	}
	qsort(r->t, r->n, sizeof(*r->t), cmp_trace);
	r->hosts = calloc(r->n, sizeof(*r->hosts));
	if (!r->hosts)
		return -ENOMEM;
	for (size_t k = 0; k < r->n; k++) {
		struct mg_trace *t = &r->t[k];
		size_t h = 0;

		while (h < r->nhosts && strcmp(r->hosts[h].name, t->meta.host) != 0)
			h++;
		if (h == r->nhosts)
			r->hosts[r->nhosts++] = (struct host){ .name = t->meta.host, .first = k };
		t->host = h;
		t->pid_base = (int64_t)(k + 1) * 100;
	}
	return 0;
}

/* Each host but the reference: its offset from the NCCL kernels of its
 * first trace and the reference's. */
static int align_collectives(struct run *r, char *err, size_t cap)
{
	struct mg_kernels ref = { 0 }, oth = { 0 };
	struct mg_names names = { 0 };
	struct gp_merge_fit fit;
	int rc;

	rc = mg_collect_kernels(&r->t[r->hosts[0].first], &ref, &names, err, cap);
	for (size_t h = 1; !rc && h < r->nhosts; h++) {
		struct host *ho = &r->hosts[h];

		oth.n = 0;
		rc = mg_collect_kernels(&r->t[ho->first], &oth, &names, err, cap);
		if (rc)
			break;
		rc = gp_merge_fit_collectives(ref.v, ref.n, oth.v, oth.n,
					      (const char *const *)names.v, &fit);
		if (rc == -ENOMEM)
			break;
		if (rc) {
			rc = 0;
			ho->aligned = "wall clock";
			snprintf(ho->why, sizeof(ho->why), "%s", fit.why);
			note(r, "host %s: left on its wall clock (no NCCL kernels to align on: %s)",
			     ho->name, fit.why);
			continue;
		}
		ho->aligned = "collectives";
		ho->offset_ns = fit.offset_ns;
		ho->matched = fit.matched;
		ho->residual_ns = fit.residual_ns;
		note(r, "host %s: aligned on host %s by %zu NCCL kernels: %+.3f us (residual %.3f us)",
		     ho->name, r->hosts[0].name, fit.matched, (double)fit.offset_ns / 1000.0,
		     (double)fit.residual_ns / 1000.0);
	}
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	free(ref.v);
	free(oth.v);
	mg_names_free(&names);
	return rc;
}

static int align(struct run *r, char *err, size_t cap)
{
	int rc = 0;

	r->hosts[0].aligned = r->nhosts == 1 ? "one clock" : "reference";
	for (size_t h = 1; h < r->nhosts; h++)
		r->hosts[h].aligned = "wall clock";
	if (r->nhosts == 1) {
		r->method = "one host";
		if (r->s->align == GP_MERGE_ALIGN_COLLECTIVES)
			note(r, "the traces are of one host, on its one clock: nothing to align");
	} else if (r->s->align == GP_MERGE_ALIGN_COLLECTIVES) {
		r->method = "collectives";
		rc = align_collectives(r, err, cap);
	} else {
		r->method = "wall clock";
		note(r, "traces of %zu hosts aligned by their wall clocks (NTP/PTP: typically within "
		     "a millisecond); --align collectives to align them on NCCL kernels", r->nhosts);
	}
	if (rc)
		return rc;
	for (size_t k = 0; k < r->n; k++) {
		struct mg_trace *t = &r->t[k];
		int64_t at;

		t->offset_ns = r->hosts[t->host].offset_ns;
		t->aligned = r->hosts[t->host].aligned;
		if (__builtin_add_overflow(t->meta.ts_base_ns, t->offset_ns, &at)) {
			snprintf(err, cap, "%s: ts_base_ns out of range", t->path);
			return -EINVAL;
		}
		if (k == 0 || at < r->base_ns)
			r->base_ns = at;
	}
	for (size_t k = 0; k < r->n; k++) {
		struct mg_trace *t = &r->t[k];
		char who[400];

		/* both terms >= base: no overflow */
		t->shift_ns = t->meta.ts_base_ns + t->offset_ns - r->base_ns;
		if (t->meta.rank >= 0)
			snprintf(who, sizeof(who), "rank %" PRId64 " \xC2\xB7 ", t->meta.rank);
		else
			snprintf(who, sizeof(who), "%s \xC2\xB7 ", t->meta.host[0] ? t->meta.host : "?");
		t->prefix = escaped(who);
		if (t->meta.rank >= 0)
			snprintf(who, sizeof(who), "rank %" PRId64 ", host %s, pid %" PRId64,
				 t->meta.rank, t->meta.host, t->meta.pid);
		else
			snprintf(who, sizeof(who), "host %s, pid %" PRId64, t->meta.host, t->meta.pid);
		t->label = escaped(who);
		if (!t->prefix || !t->label)
			return -ENOMEM;
	}
	return 0;
}

/* key (with its punctuation, e.g. ",\"pid\":") and a value */
static void put_i64(struct gp_buf *b, const char *key, int64_t v)
{
	gp_buf_puts(b, key);
	gp_buf_i64(b, v);
}

static void put_str(struct gp_buf *b, const char *key, const char *s)
{
	gp_buf_puts(b, key);
	gp_buf_json_cstr(b, s);
}

/* The first event: what went in, and how its clocks were aligned. */
static void put_header(struct run *r)
{
	struct gp_buf *b = &r->o.buf;

	gp_buf_puts(b, "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" GP_MERGE_EVENT "\",\"pid\":0,\"tid\":0,"
		       "\"ts\":0.000,\"args\":{\"version\":\"" GPUPROF_VERSION "\"");
	put_i64(b, ",\"traces\":", (int64_t)r->n);
	put_i64(b, ",\"ts_base_ns\":", r->base_ns);
	put_str(b, ",\"align\":", r->method);
	gp_buf_puts(b, ",\"hosts\":[");
	for (size_t h = 0; h < r->nhosts; h++) {
		const struct host *ho = &r->hosts[h];

		put_str(b, h ? ",{\"host\":" : "{\"host\":", ho->name);
		put_i64(b, ",\"offset_ns\":", ho->offset_ns);
		put_str(b, ",\"aligned\":", ho->aligned);
		if (ho->matched) {
			put_i64(b, ",\"matched\":", (int64_t)ho->matched);
			put_i64(b, ",\"residual_ns\":", ho->residual_ns);
		}
		if (ho->why[0])
			put_str(b, ",\"why\":", ho->why);
		if (!strcmp(ho->aligned, "wall clock"))
			put_str(b, ",\"accuracy\":", "the hosts' clock sync (NTP/PTP: typically "
							"within a millisecond)");
		gp_buf_putc(b, '}');
	}
	gp_buf_puts(b, "],\"inputs\":[");
	for (size_t k = 0; k < r->n; k++) {
		const struct mg_trace *t = &r->t[k];

		put_str(b, k ? ",{\"file\":" : "{\"file\":", t->path);
		if (t->meta.rank >= 0)
			put_i64(b, ",\"rank\":", t->meta.rank);
		else
			gp_buf_puts(b, ",\"rank\":null");
		put_str(b, ",\"host\":", t->meta.host);
		put_i64(b, ",\"pid\":", t->meta.pid);
		put_i64(b, ",\"merged_pid\":", t->pid_base);
		put_i64(b, ",\"ts_base_ns\":", t->meta.ts_base_ns);
		put_i64(b, ",\"offset_ns\":", t->offset_ns);
		put_str(b, ",\"aligned\":", t->aligned);
		gp_buf_putc(b, '}');
	}
	gp_buf_puts(b, "]}}");
}

/* The output's temporary file (out_file.h), gzip when its name ends .gz. */
static int open_tmp(struct run *r, char *err, size_t cap)
{
	const char *out = r->s->output;
	int rc = gp_out_open(&r->out, out, r->s->force, 0666, err, cap);

	if (rc)
		return rc;
	r->o.fd = gp_out_take_fd(&r->out); /* closed by write_out, or at cleanup */
	if (strlen(out) > 3 && strcmp(out + strlen(out) - 3, ".gz") == 0) {
		int fd = r->o.fd;

		r->o.fd = -1; /* the sink's now */
		rc = gp_gz_open_fd(&r->o.gz, fd, OUT_GZ_LEVEL);
		if (rc)
			snprintf(err, cap, "cannot write %s: %s", out, strerror(-rc));
	}
	return rc;
}

/* Every event, then the output closed; 0 or -errno, err set for input. */
static int write_out(struct run *r, uint64_t *events, char *err, size_t cap)
{
	int rc;

	put_header(r);
	rc = mg_out_drain(&r->o, 0);
	for (size_t k = 0; !rc && k < r->n; k++)
		rc = mg_copy_trace(&r->o, &r->t[k], k, r->n, events, err, cap);
	if (rc)
		return rc;
	gp_buf_puts(&r->o.buf, "\n]\n");
	rc = mg_out_drain(&r->o, 1);
	if (!rc && r->o.gz) {
		rc = gp_gz_close(r->o.gz);
		r->o.gz = NULL;
	} else if (!rc) {
		rc = close(r->o.fd) ? -errno : 0;
		r->o.fd = -1;
	}
	return rc;
}

int gp_merge_run(const struct gp_merge_settings *s, struct gp_merge_result *res, char *err,
		 size_t cap)
{
	struct run r = { .s = s, .n = s->ntraces, .o = { .fd = -1 }, .out = { .fd = -1 } };
	struct stat st;
	int rc;

	memset(res, 0, sizeof(*res));
	res->rank_min = res->rank_max = -1;
	err[0] = '\0';
	gp_buf_init(&r.o.buf, 0);
	if (!r.n) {
		snprintf(err, cap, "no trace to merge");
		return -EINVAL;
	}
	if (gp_out_is_input(s->output, s->traces, s->ntraces, err, cap))
		return -EINVAL;
	/* refused before any work when it exists without --force */
	rc = open_tmp(&r, err, cap);
	if (rc)
		goto cleanup;
	r.t = calloc(r.n, sizeof(*r.t));
	rc = r.t ? read_metas(&r, err, cap) : -ENOMEM;
	if (!rc)
		rc = align(&r, err, cap);
	if (rc)
		goto cleanup;
	rc = write_out(&r, &res->events, err, cap);
	if (!rc)
		rc = gp_out_commit(&r.out, err, cap);
	if (rc) {
		if (!err[0])
			snprintf(err, cap, "cannot write %s: %s", s->output, strerror(-rc));
		goto cleanup;
	}
	res->traces = r.n;
	res->bytes = stat(s->output, &st) == 0 ? (uint64_t)st.st_size : 0;
	for (size_t k = 0; k < r.n; k++) {
		int64_t rank = r.t[k].meta.rank;

		if (rank < 0) {
			res->unranked++;
			continue;
		}
		if (res->rank_min < 0 || rank < res->rank_min)
			res->rank_min = rank;
		if (rank > res->rank_max)
			res->rank_max = rank;
	}
cleanup:
	if (rc == -ENOMEM && !err[0])
		snprintf(err, cap, "out of memory");
	if (r.o.gz)
		gp_gz_abandon(r.o.gz);
	if (r.o.fd >= 0)
		close(r.o.fd);
	gp_out_abandon(&r.out);
	gp_buf_free(&r.o.buf);
	for (size_t k = 0; r.t && k < r.n; k++) {
		free(r.t[k].prefix);
		free(r.t[k].label);
	}
	free(r.hosts);
	free(r.t);
	return rc;
}
