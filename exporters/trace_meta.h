/* A trace's gpuprof.meta, its first event (TRACE_FORMAT.md), read into a
 * typed struct without reading the rest: through the trace reader
 * (trace_reader.h) and its line scanner (trace_scan.h), as every reader of
 * the format reads it. */
#ifndef GPUPROF_TRACE_META_H
#define GPUPROF_TRACE_META_H

#include <stddef.h>
#include <stdint.h>

/* What gpuprof.meta says of its process. Numbers not in the trace (or not
 * integers) are -1; host and mode are "" when not said. */
struct gp_tr_meta {
	int64_t pid, ppid, root_pid;
	int64_t rank, world_size, local_rank, local_world_size;
	int64_t start_unix_ns, job_start_unix_ns;
	int64_t ts_base_ns;  /* the clock ts counts from (CUPTI's, ns) */
	char host[256];
	char mode[16];
};

/* Reads path's gpuprof.meta (gzip or plain). 0; -EINVAL when the file does
 * not begin with one, or its pid or ts_base_ns is missing (err says which,
 * "PATH: what"); -errno when it cannot be read. */
int gp_tr_read_meta(const char *path, struct gp_tr_meta *m, char *err, size_t cap);

#endif
