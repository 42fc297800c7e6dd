/* How the flight recorders of a run directory dump at the same step when
 * the launcher gets SIGUSR1 (gpuprof --trace --window -o RUN/): files in
 * RUN/.flight/, each written whole (a temporary file renamed over it).
 *
 *   PID.step   each recorder, every second: "STEP UNIX_NS STEP_NS\n", its
 *              last step:N mark, when it wrote this, how long its last step
 *              took (0: not known)
 *   request    the launcher, on SIGUSR1: "SEQ STEP\n", then SIGUSR1 to
 *              every PID with a .step file: each recorder dumps at its
 *              step:STEP mark (now, where it is past it, it marks no steps
 *              or the mark does not come within GP_FLIGHT_SYNC_WAIT_MS)
 *
 * The launcher picks STEP past where every rank may be by the time the
 * signal arrives: each .step file's step, moved on by the time since it
 * was written (plus GP_FLIGHT_SYNC_AHEAD_MS) at its pace, the most of
 * those, plus GP_FLIGHT_SYNC_MARGIN steps. Header only: read by the
 * launcher (viewer/trace/run.c) and the recorder (profiler/flight.c). */
#ifndef GPUPROF_FLIGHT_SYNC_H
#define GPUPROF_FLIGHT_SYNC_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GP_FLIGHT_SYNC_DIR ".flight"
#define GP_FLIGHT_SYNC_REQUEST "request"
#define GP_FLIGHT_SYNC_STEP_SUFFIX ".step"
#define GP_FLIGHT_SYNC_AHEAD_MS 1500
#define GP_FLIGHT_SYNC_MARGIN 2
#define GP_FLIGHT_SYNC_WAIT_MS 10000

/* RUN/.flight/NAME into buf. 0 or -ENAMETOOLONG. */
static inline int gp_flight_sync_path(char *buf, size_t cap, const char *run_dir, const char *name)
{
	int n = snprintf(buf, cap, "%s/%s%s%s", run_dir, GP_FLIGHT_SYNC_DIR, name ? "/" : "", name ? name : "");

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* text (n bytes) into RUN/.flight/NAME, whole: written beside it and
 * renamed over it (the directory made if missing). 0 or -errno. */
static inline int gp_flight_sync_put(const char *run_dir, const char *name, const char *text, size_t n)
{
	char dir[4096], path[4096], tmp[4200];
	int fd, err = 0;

	if (gp_flight_sync_path(dir, sizeof(dir), run_dir, NULL) ||
	    gp_flight_sync_path(path, sizeof(path), run_dir, name))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		err = -EIO;
	if (close(fd) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) != 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* RUN/.flight/NAME's text (at most cap - 1 bytes, NUL-terminated). 0 or
 * -errno. */
static inline int gp_flight_sync_get(const char *run_dir, const char *name, char *buf, size_t cap)
{
	char path[4096];
	ssize_t n;
	int fd;

	if (gp_flight_sync_path(path, sizeof(path), run_dir, name))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

#endif
