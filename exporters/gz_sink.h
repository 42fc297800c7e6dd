/* A single gzip member streamed to a file descriptor.
 *
 * Data written with gp_gz_write() is compressed into an internal buffer and
 * written out as the buffer fills. gp_gz_flush() ends the current deflate block
 * with Z_FULL_FLUSH and writes everything, so the bytes on disk decompress to
 * everything written so far even if the process dies before gp_gz_close()
 * (the gzip trailer is then missing: gpuprof recover repairs that), and what
 * comes after a flush decompresses without what came before it: recover can
 * go on past damaged data (GP_GZ_FLUSH_KIND, the meta event's gz_flush).
 * Not thread-safe: one writer thread owns a sink. */
#ifndef GPUPROF_GZ_SINK_H
#define GPUPROF_GZ_SINK_H

#include <stddef.h>
#include <stdint.h>

struct gp_gz_sink;

/* A gzip member's content so far: what its trailer will say of it. */
struct gp_gz_member {
	uint32_t crc;     /* CRC-32 of the uncompressed bytes */
	uint64_t in_len;  /* their count */
};

/* How gp_gz_flush() flushes, as the meta event's gz_flush says it */
#define GP_GZ_FLUSH_KIND "full"

/* Takes ownership of fd (closed by gp_gz_close). level: zlib 1..9.
 * Returns 0 or -errno (-ENOMEM, -EINVAL); on failure fd has been closed too. */
int gp_gz_open_fd(struct gp_gz_sink **out, int fd, int level);
/* 0 or -errno. After an error every later call returns the same error. */
int gp_gz_write(struct gp_gz_sink *s, const void *data, size_t len);
int gp_gz_flush(struct gp_gz_sink *s);
/* Finishes the member (trailer), fsyncs best-effort, closes fd, frees s.
 * Safe on NULL. Returns the first error seen over the sink's life, or 0. */
int gp_gz_close(struct gp_gz_sink *s);
/* Ends the member (trailer) and writes it all out but keeps the sink, so its
 * byte counts are final; later writes fail with -EINVAL. Then gp_gz_close().
 * 0 or -errno. */
int gp_gz_finish(struct gp_gz_sink *s);
/* Flushes (full flush) and says what the member holds so far and how many
 * bytes of the file hold it: those bytes, copied, begin a member that
 * another writer may go on with (the flight recorder's dumps begin with
 * the trace's file so far, gz_ring.h). 0 or -errno. */
int gp_gz_sync_point(struct gp_gz_sink *s, struct gp_gz_member *so_far, uint64_t *file_bytes);
/* Hands the member over to another writer, who goes on with it and ends
 * it (the flight recorder appends its ring's deflate blocks, gz_ring.h):
 * flushes (full flush) and writes everything out, then frees s without a
 * trailer and gives back fd (the caller's now) and what the member holds.
 * 0 or -errno; on failure fd is closed and s freed all the same. */
int gp_gz_hand_over(struct gp_gz_sink *s, int *fd, struct gp_gz_member *so_far);
/* Moves the member to another file: flushes (full flush), copies the
 * bytes written so far from the sink's descriptor (which must be readable:
 * opened O_RDWR) to fd, at its current offset, and goes on writing there;
 * the old descriptor is closed. The default trace's outline is written
 * into an unlinked file until the trace reaches its cap, then moved under
 * the trace's name (profiler/flight.c). Takes fd, even on failure. 0 or
 * -errno; a failure sticks. */
int gp_gz_move_to(struct gp_gz_sink *s, int fd);
/* Closes fd and frees without writing a trailer (forked child, fatal error). */
void gp_gz_abandon(struct gp_gz_sink *s);
uint64_t gp_gz_bytes_in(const struct gp_gz_sink *s);  /* uncompressed so far */
uint64_t gp_gz_bytes_out(const struct gp_gz_sink *s); /* written to fd so far */

#endif
