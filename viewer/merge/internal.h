/* What merge.c (the run: order, clocks, output file) and events.c (one
 * trace's lines: read, checked, rewritten) share. Internal. */
#ifndef GPUPROF_MERGE_INTERNAL_H
#define GPUPROF_MERGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/gz_sink.h"
#include "exporters/json_buf.h"
#include "merge.h"
#include "viewer/run/run.h"

#define MG_MAX_DEVICES 64
/* ids above this lose their last digits in a double (JavaScript, Perfetto) */
#define MG_MAX_ID ((1ull << 53) - 1)
/* absolute times (ns) kept for alignment: their differences fit in int64 */
#define MG_MAX_ABS_NS (1ll << 62)

struct mg_trace {
	const char *path;
	struct gp_tr_meta meta;
	size_t host;          /* index of its host in the run */
	int64_t offset_ns;    /* added to its clock to read the reference host's */
	int64_t shift_ns;     /* added to each ts: ts_base + offset - merged base */
	int64_t pid_base;     /* its host pid in the output; GPU d: pid_base + 1 + d */
	const char *aligned;  /* how its offset was found */
	char *prefix;         /* "rank R · " or "HOST · ", JSON-escaped, no quotes */
	char *label;          /* "rank R, host H, pid P", the same */
};

/* The output: events are appended to buf, which goes to the file (through
 * gzip or not) when it is full (out.c). */
struct mg_out {
	int fd;
	struct gp_gz_sink *gz; /* NULL: plain JSON */
	struct gp_buf buf;
	uint64_t bytes;        /* written to fd (plain) */
};
int mg_out_drain(struct mg_out *o, int all);

/* The NCCL kernels of a trace, and the names they share across traces. */
struct mg_kernels {
	struct gp_merge_kernel *v;
	size_t n, cap;
};
struct mg_names {
	char **v;
	size_t n;
};
void mg_names_free(struct mg_names *names);

/* Trace k of n: its events, rewritten, appended to o; *events counts them. */
int mg_copy_trace(struct mg_out *o, const struct mg_trace *t, size_t k, size_t n,
		  uint64_t *events, char *err, size_t cap);
/* Trace t's NCCL kernels (ph X, cat kernel, name nccl*), in absolute ns of
 * its host's clock; every line checked as mg_copy_trace checks it. */
int mg_collect_kernels(const struct mg_trace *t, struct mg_kernels *ks, struct mg_names *names,
		       char *err, size_t cap);

#endif
