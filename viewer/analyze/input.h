/* A trace's bytes, cut into lines: a plain or gzip file (gzip is detected by
 * its magic), or a buffer in memory. A gzip stream that stops early (no
 * trailer: the recorder was killed) or turns into damaged data ends the lines
 * there and says so; the caller decides whether that is a trace cut short or
 * no trace at all. */
#ifndef GPUPROF_AN_INPUT_H
#define GPUPROF_AN_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

/* The format's own limit on an event line (GP_TW_MAX_LINE). */
#define AN_MAX_LINE (64u << 20)

struct an_input {
	/* A file's descriptor is held only while it is among the last used:
	 * however many traces are read together, at most an_input_max_open()
	 * are open; the others are closed, their place kept, and reopened
	 * (the same file, checked by device and inode) when read again. */
	int fd;                     /* -1 for memory, or while closed */
	char *path;                 /* a file's; NULL for memory */
	dev_t dev;
	ino_t ino;
	off_t pos;                  /* where reading goes on, while closed */
	struct an_input *newer, *older; /* the open ones, most recently used first */
	int detected;               /* gzip or not: known */
	const unsigned char *mem;   /* memory input */
	size_t mem_len, mem_pos;
	int gz;                     /* 1: gzip, detected */
	int gz_raw;                 /* inflating the first member raw (no CRC) */
	int z_ready;
	z_stream zs;
	unsigned char *zbuf;        /* compressed bytes read from the file */
	size_t zbuf_cap;
	char *buf;                  /* decompressed bytes; lines are cut here */
	size_t cap, start, end;
	int raw_eof;                /* no more bytes from the file or buffer */
	int done;                   /* no more decompressed bytes either */
	uint64_t line_no;           /* of the line last returned, 1-based */
	uint64_t bytes_in;          /* file bytes consumed, for progress */
	uint64_t size;              /* file size, 0 if unknown */
	int gzip_cut;               /* the gzip stream ended without its trailer */
	int gzip_damaged;           /* the gzip stream held invalid data */
	int last_unterminated;      /* the last line returned had no newline */
	int io_errno;               /* a read failed */
};

/* The most files open at once: a quarter of RLIMIT_NOFILE's soft limit,
 * within 16..256; GPUPROF_MAX_OPEN_INPUTS lowers it (tests). */
size_t an_input_max_open(void);

/* 0, or -errno from open/fstat (the file cannot be read); -EINVAL when it
 * is not a regular file (exporters/in_file.h). */
int an_input_open_file(struct an_input *in, const char *path);
int an_input_open_mem(struct an_input *in, const void *p, size_t n);
void an_input_close(struct an_input *in);
/* The next line, without its newline (or "\r\n"). 1: the line and its length set (valid
 * until the next call); 0: no more lines; -EFBIG: a line longer than
 * AN_MAX_LINE; -EIO (io_errno set) or -ENOMEM. */
int an_input_line(struct an_input *in, const char **line, size_t *len);

#endif
