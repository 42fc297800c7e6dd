/* Every output file gpuprof writes (a report's page, a merged trace, a
 * repaired trace, a run's manifest) is written the one way this file has:
 * into a temporary file created exclusively (mkostemp: O_CREAT|O_EXCL, so
 * nothing planted under its name is followed or reused) in the output's
 * own directory, then renamed over the output once whole. A reader never
 * sees half a file, a failure leaves the old output as it was, and a
 * symbolic link planted at the output's name is replaced, never written
 * through.
 *
 * The one overwrite rule: an output that exists is replaced only when the
 * caller was told to (--force); otherwise gp_out_open() refuses it with
 * -EEXIST and says so. No output may be one of the command's inputs:
 * gp_out_is_input() compares device and inode, whatever the names.
 *
 * Every function returns 0 or -errno; err gets one line when not 0. */
#ifndef GPUPROF_OUT_FILE_H
#define GPUPROF_OUT_FILE_H

#include <stddef.h>
#include <sys/types.h>

struct gp_out_file {
	const char *path; /* the output, borrowed from the caller */
	char *tmp;        /* the temporary file beside it, while it exists */
	int fd;           /* open on tmp; -1 once handed over (gp_out_take_fd) */
};

/* Creates the temporary file for path, with mode less the umask. force: an
 * existing path may be replaced; without it, -EEXIST ("PATH already exists
 * (--force replaces it)"). */
int gp_out_open(struct gp_out_file *o, const char *path, int force, mode_t mode, char *err,
		size_t cap);

/* The temporary file's descriptor, handed over: the caller closes it (a
 * gzip sink does, at gp_gz_close) before gp_out_commit(). */
int gp_out_take_fd(struct gp_out_file *o);

/* Closes the file (when still held), renames it over path, and makes the
 * rename durable (best effort). On failure the temporary file is removed. */
int gp_out_commit(struct gp_out_file *o, char *err, size_t cap);

/* Removes the temporary file, if any; safe to call after gp_out_commit(). */
void gp_out_abandon(struct gp_out_file *o);

/* Whether path names the same file as one of inputs (device and inode, by
 * stat(): through symbolic links); 1 then, with err saying so, else 0. */
int gp_out_is_input(const char *path, const char *const *inputs, size_t n, char *err, size_t cap);

#endif
