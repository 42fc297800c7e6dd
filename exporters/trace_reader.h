/* The trace format's reader: a trace's bytes cut into lines (TRACE_FORMAT.md:
 * "[", one event per line, "]"), from a plain or gzip file (gzip is detected
 * by its magic) or a buffer in memory. A gzip stream that stops early (no
 * trailer: the recorder was killed) or turns into damaged data ends the
 * lines there and says so; the caller decides whether that is a trace cut
 * short or no trace at all.
 *
 * A gzip trace is inflated on worker threads where it can be (the writer's
 * Z_FULL_FLUSH points cut it into chunks that inflate on their own,
 * trace_chunks.c); the lines come out the same, in the same order, as from
 * one thread. gp_tr_threads() says how many.
 *
 * Each line's members: trace_scan.h. The reader is opaque; one thread uses
 * a given reader (and the open-file bookkeeping below is not locked: one
 * thread reads traces). */
#ifndef GPUPROF_TRACE_READER_H
#define GPUPROF_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

/* The format's own limit on an event line (GP_TW_MAX_LINE). */
#define GP_TR_MAX_LINE (64u << 20)

struct gp_tr;
struct gp_tr_members;

/* Where reading stands, for the caller's messages and decisions. */
struct gp_tr_state {
	uint64_t line_no;      /* of the line last returned, 1-based */
	int gzip;              /* the input is gzip (known from the first line on) */
	int done;              /* no more bytes to cut into lines */
	int gzip_cut;          /* the gzip stream ended without its trailer */
	int gzip_damaged;      /* the gzip stream held invalid data */
	int last_unterminated; /* the last line returned had no newline */
	int io_errno;          /* a read failed */
	uint64_t bytes_in;     /* file bytes consumed, for progress */
	uint64_t size;         /* file size, 0 if unknown */
	uint64_t chunks;       /* chunks inflated on workers and used (tests, bench) */
	uint64_t skipped;      /* lines passed over (gp_tr_set_skip_ignored()), counted in line_no */
};

/* The most files open at once: a quarter of RLIMIT_NOFILE's soft limit,
 * within 16..256; GPUPROF_MAX_OPEN_INPUTS lowers it (tests). However many
 * traces are read together, at most that many descriptors are held: the
 * least recently read ones are closed, their place kept, and reopened (the
 * same file, checked by device and inode) when read again. */
size_t gp_tr_max_open(void);

/* The threads a gzip trace is inflated on: GPUPROF_THREADS when set (1:
 * its chunks inflated and scanned on the calling thread; at most 64), else
 * the online CPUs, at most GP_TR_DEFAULT_THREADS. */
#define GP_TR_DEFAULT_THREADS 8
unsigned gp_tr_threads(void);

/* 0 with *out a new reader, or -errno from open/fstat (the file cannot be
 * read); -EINVAL when it is not a regular file (exporters/in_file.h);
 * -ENOMEM. */
int gp_tr_open_file(struct gp_tr **out, const char *path);
/* The same over n bytes at p, borrowed: they must outlive the reader. */
int gp_tr_open_mem(struct gp_tr **out, const void *p, size_t n);
/* Sets the threads of this reader before its first line: 1, the chunks on
 * the calling thread; 0, one plain zlib stream, no chunks (the reference
 * the chunked reader is tested against). */
void gp_tr_set_threads(struct gp_tr *r, unsigned threads);
/* Cuts chunks from this many compressed bytes on (tests: the flushes of a
 * small trace each a chunk); 0: the default, 128 KiB. */
void gp_tr_set_chunk_min(struct gp_tr *r, size_t bytes);
void gp_tr_close(struct gp_tr *r);

/* The next line, without its newline (or "\r\n"). 1: the line and its
 * length set (valid until the next call); 0: no more lines; -EFBIG: a line
 * longer than GP_TR_MAX_LINE; -EIO (io_errno set) or -ENOMEM. */
int gp_tr_line(struct gp_tr *r, const char **line, size_t *len);

/* Asks r to scan lines on its workers too (trace_scan.h's gp_tr_scan_line,
 * with skip_ignored), before the first line; gp_tr_scanned() gives them. */
void gp_tr_set_scan(struct gp_tr *r, int scan);
/* The members of the line gp_tr_line() last returned, p[0..n) being that
 * line trimmed as gp_tr_line_trim() does, where a worker scanned it: 1 with
 * out as gp_tr_scan_line() (out->skip_ignored set) would fill it; 0 where it
 * was not scanned there (out->skip_ignored clear, a line across chunks, a
 * line that does not scan cleanly): the caller scans it itself. */
int gp_tr_scanned(struct gp_tr *r, const char *p, size_t n, struct gp_tr_members *out);

/* A caller's decoder of scanned lines: turns the members of one line (p[0..n)
 * trimmed, as gp_tr_scanned() would give them) into the caller's record of
 * rec_size bytes at rec. 1: decoded; 0: not (the consumer reads that line's
 * members itself). It runs on the worker threads, on several lines at once:
 * it must depend on nothing but its arguments. */
typedef int (*gp_tr_decode_fn)(const struct gp_tr_members *m, const char *p, size_t n, void *rec);
/* With gp_tr_set_scan(), before the first line: the workers run fn on each
 * line they scanned that no analysis ignores, and keep its record in place
 * of the members' values. rec_size: at most GP_TR_MAX_REC. */
#define GP_TR_MAX_REC 512
int gp_tr_set_decoder(struct gp_tr *r, gp_tr_decode_fn fn, size_t rec_size);

/* What a worker made of a line (gp_tr_next()). */
enum gp_tr_done {
	GP_TR_RAW,     /* nothing: the line as gp_tr_line() gives it */
	GP_TR_SCANNED, /* trimmed (gp_tr_line_trim()); gp_tr_scanned() gives its members */
	GP_TR_IGNORED, /* trimmed; an event no analysis uses (its members' "ignored") */
	GP_TR_DECODED, /* trimmed; *rec is the decoder's record, valid until the next line
			* (its members are not kept: gp_tr_scanned() says 0) */
};
/* From now on gp_tr_next() passes over the lines a worker found to be
 * events no analysis uses (GP_TR_IGNORED) instead of handing them out, and
 * counts them in the state's skipped. */
void gp_tr_set_skip_ignored(struct gp_tr *r, int skip);
/* gp_tr_line() with what the workers made of the line (*done, enum
 * gp_tr_done), without touching it here where they did: after the
 * workers, its bytes are in another core's cache. */
int gp_tr_next(struct gp_tr *r, const char **line, size_t *len, int *done, const void **rec);

/* Valid until the next call on r. */
const struct gp_tr_state *gp_tr_state(const struct gp_tr *r);

#endif
