/* The last stretch of a trace, kept compressed in memory and written out
 * whole on demand: the flight recorder's ring.
 *
 * What is written goes through one raw deflate stream that is never
 * finished. Sealing a segment ends it with Z_FULL_FLUSH, as the trace's own
 * flushes do (gz_sink.h), so what follows refers to nothing before it: a
 * segment decompresses alone, and any run of consecutive kept segments,
 * the oldest dropped, is still a valid stretch of deflate blocks. The ring
 * keeps whole segments, oldest first, under a cap on their compressed
 * bytes, and drops what a time window leaves behind; it counts what it let
 * go.
 *
 * A dump is one gzip member (RFC 1952) written to a descriptor: a head the
 * caller gives (the trace's "["), compressed then and ended with a full
 * flush, the kept segments byte for byte (the first with its opening, the
 * others without: gp_gz_ring_end_opening), and a tail (the trace's end),
 * finished; its CRC-32 is combined
 * from each part's (crc32_combine), so the segments are neither inflated
 * nor compressed again. The member is flushed as the trace writer's, so
 * the reader cuts it into chunks the same way.
 *
 * Memory: the kept segments (at most the cap, and one segment over it
 * while it is sealed), the segment being written, and deflate's state
 * (about 256 KiB at memLevel 8). Inside the profiled process: never
 * prints; every failure is a return value, and a failure of the stream
 * sticks (the owner turns the ring off). One thread owns a ring. */
#ifndef GPUPROF_GZ_RING_H
#define GPUPROF_GZ_RING_H

#include <stddef.h>
#include <stdint.h>

#include "gz_sink.h"

struct gp_gz_ring;

/* What a ring holds now, and what it has let go since it was made. Stamps
 * are the caller's (any clock, any unit), INT64_MIN where none is kept. */
struct gp_gz_ring_stats {
	uint64_t segments;    /* kept */
	uint64_t bytes;       /* kept, compressed */
	uint64_t in_bytes;    /* kept, uncompressed */
	uint64_t dropped_segments;
	uint64_t dropped_bytes;
	uint64_t dropped_in_bytes;
	int64_t first_stamp;  /* the oldest kept segment's */
	int64_t last_stamp;   /* the newest kept segment's */
	uint64_t pending_in;  /* written since the last seal, uncompressed */
};

/* max_bytes: the compressed bytes kept at most (at least one segment is
 * kept, whatever its size); level: zlib's 1..9. 0 or -errno (-EINVAL,
 * -ENOMEM). */
int gp_gz_ring_new(struct gp_gz_ring **out, size_t max_bytes, int level);
/* n bytes into the segment being written. 0 or -errno. */
int gp_gz_ring_write(struct gp_gz_ring *r, const void *p, size_t n);
/* What was written into the segment being written so far (something, and
 * nothing marked yet) is its opening: a dump writes it where the segment is
 * the first the dump holds, and passes over it otherwise. The flight
 * recorder opens each segment with the state of the run at its start, so
 * that a dump may begin at any segment. Ends it with a full flush. 0 or
 * -errno (-EINVAL: nothing written, or an opening already marked). */
int gp_gz_ring_end_opening(struct gp_gz_ring *r);
/* Forgets what was written into the segment being written since the last
 * seal (the flight recorder's first line, the meta, which every dump's
 * head carries instead). 0 or -errno (-EINVAL: its opening was marked). */
int gp_gz_ring_discard(struct gp_gz_ring *r);
/* Ends the segment being written and keeps it under stamp (the time of
 * its newest content, in the caller's clock), then drops the oldest
 * segments while more than max_bytes are kept. Nothing written since the
 * last seal: nothing kept. 0 or -errno. */
int gp_gz_ring_seal(struct gp_gz_ring *r, int64_t stamp);
/* Drops the kept segments whose stamp is before stamp (a time window). */
void gp_gz_ring_drop_before(struct gp_gz_ring *r, int64_t stamp);
/* One gzip member to fd (the caller's, left open): head, every kept
 * segment in order from the one numbered from_seq (gp_gz_ring_next_seq;
 * 0: all), tail (head and tail at most 1 GiB each, else -EINVAL). What was
 * written since the last seal is not in it (seal first). 0 or -errno;
 * after a failure fd holds part of a member. */
int gp_gz_ring_dump(const struct gp_gz_ring *r, int fd, uint64_t from_seq, const void *head, size_t head_len,
		    const void *tail, size_t tail_len);
/* The same, going on with a member written so far to fd and handed over
 * (gz_sink.h, gp_gz_hand_over): no header, no head; the kept segments and
 * tail end it. 0 or -errno. */
int gp_gz_ring_dump_after(const struct gp_gz_ring *r, int fd, uint64_t from_seq,
			  const struct gp_gz_member *so_far, const void *tail, size_t tail_len);
/* The number the segment being written gets when sealed: segments are
 * numbered from 0 in the order sealed, kept or since dropped. */
uint64_t gp_gz_ring_next_seq(const struct gp_gz_ring *r);
void gp_gz_ring_stats(const struct gp_gz_ring *r, struct gp_gz_ring_stats *st);
/* Safe on NULL. */
void gp_gz_ring_free(struct gp_gz_ring *r);

#endif
