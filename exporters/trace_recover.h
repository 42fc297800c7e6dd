/* Repairs a trace cut short (SIGKILL, power loss, disk full) or damaged
 * (a bad disk, a file changed by hand): decompresses as far as the gzip
 * stream goes, keeps every complete event line, before and after damaged
 * ones, and writes a new, valid trace. Its last event is the trace's own
 * "gpuprof.end" where it had one, else a new one with args.recovered =
 * true; either says what was passed over (lines_skipped, bytes_skipped,
 * gzip_gaps, damage_after). Compressed data that does not decode is passed
 * over up to the next flush point where the trace says its flushes allow it
 * (gz_flush "full"); before that, the rest of the stream is lost. The input
 * is untrusted: anything that is not a gpuprof trace gives -EINVAL and no
 * output file. */
#ifndef GPUPROF_TRACE_RECOVER_H
#define GPUPROF_TRACE_RECOVER_H

#include <stdint.h>

#define GP_RECOVER_PATH_MAX 4096

struct gp_recover_result {
	uint64_t events_kept;     /* complete event lines copied */
	uint64_t bytes_dropped;   /* decompressed bytes of an incomplete last line */
	uint64_t lines_skipped;   /* damaged lines passed over (and any after "]") */
	uint64_t bytes_skipped;   /* their decompressed bytes */
	uint64_t damage_after;    /* events kept before the first damage */
	uint64_t gzip_gaps;       /* stretches of compressed data passed over */
	uint64_t gzip_bytes_skipped; /* their compressed bytes */
	uint64_t chunks_dropped;  /* flush chunks that did not decode whole: what had
				   * decoded of them is passed over too (in
				   * lines_skipped, bytes_skipped) */
	uint64_t chunk_bytes_dropped; /* those decoded bytes */
	int already_complete;     /* the input ended cleanly, undamaged; output is a
				   * copy of its bytes (not compressed again) */
	int gzip_truncated;       /* the gzip stream ended before its trailer */
	int gzip_lost_tail;       /* compressed data that did not decode ended the
				   * repair: what followed it is lost */
	int output_failed;        /* the error came from writing the output */
	/* gp_trace_recover_in_place: the damaged original, kept under this
	 * name beside the repair ("" where nothing but an incomplete last
	 * line was left out: then it is replaced) */
	char original[GP_RECOVER_PATH_MAX];
};

/* Whether a repair left out more than an incomplete last line. */
static inline int gp_recover_damaged(const struct gp_recover_result *r)
{
	return r->lines_skipped || r->gzip_gaps || r->gzip_lost_tail;
}

/* Only whole flush chunks are kept (the stretch between two of the
 * writer's full flushes, which decompresses on its own): a chunk whose
 * compressed data fails to decode anywhere is dropped whole, what had
 * decoded of it included, as damage may alter what still decodes. A
 * complete stream whose gzip check fails with no damage found to account
 * for it is refused (-EBADMSG): which events were altered cannot be told.
 *
 * in_path and out_path may not be the same file. out_path is written whole
 * or not at all (exporters/out_file.h: a temporary file beside it, renamed
 * over it), and replaced only with force. Returns 0 or -errno: -EINVAL not
 * a gpuprof trace, -EEXIST output exists (without force), others from I/O
 * (res->output_failed says which side). */
int gp_trace_recover(const char *in_path, const char *out_path, int force,
		     struct gp_recover_result *res);
/* Same, in place: writes to a temporary file beside path and renames it over
 * path; where the repair left out more than an incomplete last line
 * (gp_recover_damaged) the original is first kept as path.orig (or
 * path.orig.N), named in res->original. */
int gp_trace_recover_in_place(const char *path, struct gp_recover_result *res);

#endif
