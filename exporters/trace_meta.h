/* A trace's gpuprof.meta, its first event (TRACE_FORMAT.md), read into a
 * typed struct without reading the rest: through the trace reader
 * (trace_reader.h) and its line scanner (trace_scan.h), as every reader of
 * the format reads it. */
#ifndef GPUPROF_TRACE_META_H
#define GPUPROF_TRACE_META_H

#include <stddef.h>
#include <stdint.h>

#include "json_scan.h" /* struct gp_json_val */

/* What gpuprof.meta says of its process. Numbers not in the trace are -1;
 * host and mode are "" when not said. */
struct gp_tr_meta {
	int64_t format;
	int64_t pid, ppid, root_pid;
	int64_t rank, world_size, local_rank, local_world_size;
	int64_t start_unix_ns, job_start_unix_ns; /* as uint64_t where has_ says */
	int has_start_unix_ns, has_job_start_unix_ns;
	int64_t ts_base_ns;  /* the clock ts counts from (CUPTI's, ns) */
	int statics_none;    /* "statics": "none" (module globals not recorded) */
	int memory_by_context; /* "memory_device": "context" (older traces: device 0) */
	char host[256];      /* the hostname, cut to fit */
	char mode[16];       /* cuda, tensor or native; "" */
	/* the strings as the line has them, borrowed from it (gp_tr_meta_decode
	 * only; NONE where absent) */
	struct gp_json_val cmdline_val, hostname_val, version_val, mode_val;
};

struct gp_tr_members;

/* What a meta's numbers may be and still be a trace (past them, they are
 * absurd): a pid fits an int32; ts_base_ns is under 4e18, so that
 * ts_base_ns + ts stays inside int64; a rank or a count of a job is under
 * 2^24. */
#define GP_TR_META_PID_MAX INT32_MAX
#define GP_TR_META_TS_BASE_MAX 4000000000000000000ull
#define GP_TR_META_JOB_MAX (1u << 24)

/* The meta from its scanned line l (trace_scan.h; its name gpuprof.meta):
 * every check of its members, in the format's order, the first failure in
 * why ("gpuprof.meta event: \"pid\" is ...", no "PATH:LINE: "): 0, or
 * -EINVAL. Strings are left in *_val (not copied, but host and mode). */
int gp_tr_meta_decode(const struct gp_tr_members *l, struct gp_tr_meta *m, char *why, size_t cap);

/* Reads path's gpuprof.meta (gzip or plain), decoded as above. 0; -EINVAL
 * when the file does not begin with one (no gpuprof trace: "PATH: what"),
 * -EBADMSG when it fails a check (a gpuprof trace analyze would refuse:
 * "PATH:LINE: what"); -errno when it cannot be read. The *_val members
 * are cleared: the line is gone. */
int gp_tr_read_meta(const char *path, struct gp_tr_meta *m, char *err, size_t cap);

#endif
