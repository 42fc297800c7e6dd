/* Every file gpuprof reads as input (a trace, a summary, a run's manifest)
 * is opened the one way this file has: only a regular file is. A FIFO, a
 * socket or a device named as a trace would block the reader, or feed it
 * without end; it is refused at once instead (opened with O_NONBLOCK, so
 * that even opening a FIFO with no writer returns, then checked). */
#ifndef GPUPROF_IN_FILE_H
#define GPUPROF_IN_FILE_H

/* A descriptor open for reading on path (blocking reads, close-on-exec),
 * or -errno: -EINVAL when path is not a regular file (-EISDIR for a
 * directory). */
int gp_in_open(const char *path);

/* What gp_in_open()'s -errno means, for a line: strerror(), except for
 * -EINVAL. */
const char *gp_in_strerror(int rc);

#endif
