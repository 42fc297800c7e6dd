/* Outputs written whole, beside themselves, never through a link
 * (out_file.h). */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gp_out_open(struct gp_out_file *o, const char *path, int force, mode_t mode, char *err,
		size_t cap)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	mode_t um = umask(0);
	struct stat st;
	int rc;

	umask(um);
	o->path = path;
	o->tmp = NULL;
	o->fd = -1;
	if (!path[dirlen]) {
		snprintf(err, cap, "%s: names a directory, not a file", path);
		return -EISDIR;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, cap, "%s is a directory", path);
			return -EISDIR;
		}
		if (!force) {
			snprintf(err, cap, "%s already exists (--force replaces it)", path);
			return -EEXIST;
		}
	}
	/* hidden, so that nobody takes it for an output meanwhile; in the
	 * output's directory, so that rename() is atomic */
	if (asprintf(&o->tmp, "%.*s.%s.XXXXXX", dirlen, path, path + dirlen) < 0) {
		o->tmp = NULL;
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	/* O_CREAT|O_EXCL: a name that exists, a planted link included, is
	 * never opened; mkostemp tries another */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		rc = -errno;
		snprintf(err, cap, "cannot write beside %s: %s", path, strerror(-rc));
		free(o->tmp);
		o->tmp = NULL;
		return rc;
	}
	if (fchmod(o->fd, mode & ~um) != 0) {
		rc = -errno;
		snprintf(err, cap, "cannot write beside %s: %s", path, strerror(-rc));
		gp_out_abandon(o);
		return rc;
	}
	return 0;
}

int gp_out_take_fd(struct gp_out_file *o)
{
	int fd = o->fd;

	o->fd = -1;
	return fd;
}

static void fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = NULL;
	int fd;

	if (slash && asprintf(&dir, "%.*s", (int)(slash - path + 1), path) < 0)
		return;
	fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: the rename is durable once this returns */
		close(fd);
	}
	free(dir);
}

int gp_out_commit(struct gp_out_file *o, char *err, size_t cap)
{
	int rc = 0;

	if (o->fd >= 0) {
		if (fsync(o->fd) != 0 && errno != EINVAL && errno != EROFS)
			rc = -errno;
		if (close(o->fd) != 0 && !rc)
			rc = -errno;
		o->fd = -1;
	}
	if (!rc && rename(o->tmp, o->path) != 0)
		rc = -errno;
	if (rc) {
		snprintf(err, cap, "cannot write %s: %s", o->path, strerror(-rc));
		gp_out_abandon(o);
		return rc;
	}
	free(o->tmp);
	o->tmp = NULL;
	fsync_dir_of(o->path);
	return 0;
}

void gp_out_abandon(struct gp_out_file *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

int gp_out_is_input(const char *path, const char *const *inputs, size_t n, char *err, size_t cap)
{
	struct stat out, in;

	if (stat(path, &out) != 0)
		return 0; /* not there yet: no input's */
	for (size_t i = 0; i < n; i++) {
		if (stat(inputs[i], &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			if (strcmp(inputs[i], path) == 0)
				snprintf(err, cap, "%s is an input: it cannot be the output too", path);
			else
				snprintf(err, cap, "%s is an input (%s): it cannot be the output too",
					 path, inputs[i]);
			return 1;
		}
	}
	return 0;
}
