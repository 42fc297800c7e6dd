/* Repairs a trace cut short (SIGKILL, power loss, disk full): decompresses as
 * far as the gzip stream goes, keeps every complete event line, and writes a
 * new, valid trace whose last event is a "gpuprof.end" marker with
 * args.recovered = true. The input is untrusted: anything that is not a
 * gpuprof trace gives -EINVAL and no output file. */
#ifndef GPUPROF_TRACE_RECOVER_H
#define GPUPROF_TRACE_RECOVER_H

#include <stdint.h>

struct gp_recover_result {
	uint64_t events_kept;     /* complete event lines copied */
	uint64_t bytes_dropped;   /* decompressed bytes after the last whole line */
	int already_complete;     /* the input ended cleanly; output is a copy */
	int gzip_truncated;       /* the gzip member had no trailer or was cut */
};

/* in_path and out_path may not be the same file. out_path is created with
 * O_EXCL|O_NOFOLLOW (never overwrites). Returns 0 or -errno:
 * -EINVAL not a gpuprof trace, -EEXIST output exists, others from I/O. */
int gp_trace_recover(const char *in_path, const char *out_path,
		     struct gp_recover_result *res);
/* Same, in place: writes to a temporary file beside in_path, renames over it. */
int gp_trace_recover_in_place(const char *path, struct gp_recover_result *res);

#endif
