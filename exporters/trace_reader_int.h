/* The reader's state, shared by trace_reader.c (files, gzip members, lines)
 * and trace_chunks.c (the same gzip stream inflated on worker threads).
 * Nothing outside these two files includes it: struct gp_tr is opaque. */
#ifndef GPUPROF_TRACE_READER_INT_H
#define GPUPROF_TRACE_READER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#include "trace_reader.h"

struct gp_tr_chunks;
struct gp_tr_members;

struct gp_tr {
	/* A file's descriptor is held only while it is among the last used
	 * (gp_tr_max_open()). */
	int fd;                     /* -1 for memory, or while closed */
	char *path;                 /* a file's; NULL for memory */
	dev_t dev;
	ino_t ino;
	off_t pos;                  /* where reading goes on, while closed */
	struct gp_tr *newer, *older; /* the open ones, most recently used first */
	int detected;               /* gzip or not: known */
	const unsigned char *mem;   /* memory input, borrowed */
	size_t mem_len, mem_pos;
	int gz;                     /* 1: gzip, detected */
	int gz_raw;                 /* inflating the first member raw (no CRC) */
	int z_ready;
	z_stream zs;
	unsigned char *zbuf;        /* compressed bytes read from the file */
	size_t zbuf_cap;
	char *buf;                  /* decompressed bytes; lines are cut here */
	size_t cap, start, end;
	uint64_t buf_off;           /* where buf[0] is in the inflated stream */
	int scan;                   /* gp_tr_set_scan() */
	int skip_ignored;           /* gp_tr_set_skip_ignored() */
	gp_tr_decode_fn decode;     /* gp_tr_set_decoder() */
	size_t rec_size;
	int raw_eof;                /* no more bytes from the file or buffer */
	unsigned threads;           /* gp_tr_set_threads(); 0: serial, no chunks */
	size_t chunk_min;           /* gp_tr_set_chunk_min(); 0: the default */
	struct gp_tr_chunks *chunks; /* the first member inflated on workers; NULL: serial */
	const char *direct_line;    /* the last line, where handed out in a chunk's output */
	uint64_t direct_off;        /* that line's offset in the inflated stream */
	struct gp_tr_state st;
};

/* trace_chunks.c: gp_tr_chunks_start() takes the first member's compressed
 * bytes read so far (p, n: after its header) and sets in->chunks: 0 or
 * -ENOMEM. gp_tr_chunks_fill() appends up to room inflated bytes at
 * buf + end: how many; 0 when it has handed the rest to the serial path
 * (in->chunks NULL, in->zs and in->zbuf set); -EIO or -ENOMEM. */
int gp_tr_chunks_start(struct gp_tr *in, const unsigned char *p, size_t n);
ssize_t gp_tr_chunks_fill(struct gp_tr *in, size_t room);
/* While the line buffer is empty: the next line, where it lies whole in the
 * current chunk's output, handed out there (no copy through the buffer)
 * with what its worker made of it (gp_tr_next()); sets direct_line and
 * direct_off (where the line handed out starts), moves buf_off past it. 1,
 * or 0: the caller reads it through the buffer. */
int gp_tr_chunks_line(struct gp_tr *in, const char **line, size_t *len, int *done,
		      const void **rec);
/* gp_tr_scanned() where in->chunks is set; g: the line's offset in the
 * inflated stream. */
int gp_tr_chunks_scanned(struct gp_tr *in, uint64_t g, const char *p, size_t n, struct gp_tr_members *out);
void gp_tr_chunks_free(struct gp_tr *in);

/* trace_bytes.c, below both: the open files (most recently used first;
 * one thread reads inputs: no lock), the raw bytes, a gzip member's end. */
#define ZCHUNK (256u << 10) /* compressed bytes read at once */
#define DCHUNK (1u << 20)   /* inflated bytes: the line buffer's size */
void gp_tr_files_make_room(void);        /* closes the least recently used past the limit */
void gp_tr_files_add(struct gp_tr *in);    /* in's descriptor, the newest */
void gp_tr_files_remove(struct gp_tr *in); /* in's descriptor closed or closing */
/* Up to n raw bytes into p: how many, 0 at the end, -1 with st.io_errno. */
ssize_t gp_tr_raw_read(struct gp_tr *in, unsigned char *p, size_t n);
/* More compressed input when zlib has used what it had. 0, or -EIO. */
int gp_tr_refill_z(struct gp_tr *in);
/* After a member: skips the raw member's trailer, then either ends or goes
 * on with the next member in zlib's gzip mode. 0, or -EIO / -ENOMEM. */
int gp_tr_member_end(struct gp_tr *in);

#endif
