/* The traces a run left: the root process's and those of PROGRAM's children
 * that used CUDA (exporters/trace_names.h), each repaired when its process
 * was cut short. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exporters/trace_names.h"
#include "exporters/trace_recover.h"
#include "launch.h"
#include "viewer/cli.h"
#include "viewer/run/run.h"

static int compare_traces(const void *a, const void *b)
{
	const struct gp_trace_file *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static bool newer_or_same(const struct timespec *t, const struct timespec *since)
{
	return t->tv_sec > since->tv_sec ||
	       (t->tv_sec == since->tv_sec && t->tv_nsec >= since->tv_nsec);
}

static int add_trace(struct gp_trace_file **files, size_t *count, char *path, pid_t pid,
		     const struct gp_tr_meta *meta)
{
	struct gp_trace_file *grown = realloc(*files, (*count + 1) * sizeof(**files));

	if (!grown) {
		free(path);
		return -ENOMEM;
	}
	*files = grown;
	grown[*count] = (struct gp_trace_file){ .path = path, .pid = pid };
	if (meta)
		grown[*count].meta = *meta;
	(*count)++;
	return 0;
}

/* In a run directory: the traces written during this run by PROGRAM and
 * its descendants, which say so (root_pid, on this host). Other
 * launchers' (srun's other tasks on this host) are theirs to list. */
static int collect_run_dir(const struct gp_trace_run *r, struct gp_trace_file **files,
			   size_t *count)
{
	char err_line[1024], **names = NULL, *path;
	struct gp_tr_meta m;
	struct stat st;
	size_t n = 0;
	int err;

	err = gp_run_list(r->run_dir, gp_run_is_trace_name, NULL, &names, &n, err_line,
			  sizeof(err_line));
	for (size_t i = 0; !err && i < n; i++) {
		if (asprintf(&path, "%s/%s", r->run_dir, names[i]) < 0) {
			err = -ENOMEM;
			break;
		}
		/* a trace whose meta cannot be read yet (its process only just
		 * opened it) is not known to be ours */
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
		    !newer_or_same(&st.st_mtim, &r->start) ||
		    gp_tr_read_meta(path, &m, err_line, sizeof(err_line)) != 0 ||
		    strcmp(m.host, r->host) != 0 || (m.root_pid != r->child && m.pid != r->child)) {
			free(path);
			continue;
		}
		err = add_trace(files, count, path, (pid_t)m.pid, &m);
	}
	gp_run_paths_free(names, n);
	if (!err && *count > 1)
		qsort(*files, *count, sizeof(**files), compare_traces);
	return err;
}

/* The root trace and the traces of PROGRAM's children that used CUDA (see
 * gp_child_trace_path()), or those of a run directory. A child's file
 * counts only if written during this run: an older one with the same stem
 * belongs to an earlier run. */
int gp_trace_collect(const struct gp_trace_run *r, struct gp_trace_file **files, size_t *count)
{
	const char *slash, *out_name;
	char *dir, *path;
	struct dirent *d;
	struct stat st;
	DIR *dp = NULL;
	int err = 0;
	pid_t pid;

	if (r->run_dir)
		return collect_run_dir(r, files, count);
	slash = strrchr(r->output, '/');
	out_name = slash + 1;
	dir = strndup(r->output, slash == r->output ? 1 : (size_t)(slash - r->output));
	if (!dir)
		return -ENOMEM;
	if (lstat(r->output, &st) == 0 && S_ISREG(st.st_mode)) {
		path = strdup(r->output);
		err = path ? add_trace(files, count, path, 0, NULL) : -ENOMEM;
		if (err)
			goto cleanup;
	}
	dp = opendir(dir);
	if (!dp) {
		err = -errno;
		goto cleanup;
	}
	while ((errno = 0, d = readdir(dp)) != NULL) {
		pid = gp_child_trace_pid(out_name, d->d_name);
		if (pid <= 0)
			continue;
		if (fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || !newer_or_same(&st.st_mtim, &r->start))
			continue;
		if (asprintf(&path, "%s/%s", strcmp(dir, "/") ? dir : "", d->d_name) < 0) {
			err = -ENOMEM;
			goto cleanup;
		}
		err = add_trace(files, count, path, pid, NULL);
		if (err)
			goto cleanup;
	}
	if (errno)
		err = -errno;
	if (*count > 1)
		qsort(*files, *count, sizeof(**files), compare_traces);
cleanup:
	if (dp)
		closedir(dp);
	free(dir);
	return err;
}

static bool process_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* Every trace goes through recovery: it cheaply leaves a complete file alone
 * and repairs one cut short (PROGRAM killed, a child killed by its parent). */
static void repair_trace(struct gp_trace_file *f, bool several)
{
	struct gp_recover_result res = { 0 };
	struct stat st;
	int err;

	err = gp_trace_recover_in_place(f->path, &res);
	if (err == -EINVAL)
		gp_msg("%s is not a readable gpuprof trace; left as it is", f->path);
	else if (err)
		gp_msg("cannot check %s: %s (try: gpuprof recover %s)", f->path,
		       strerror(-err), f->path);
	else if (!res.already_complete)
		gp_msg("trace cut short; recovered %" PRIu64 " events up to the last flush%s%s%s",
		       res.events_kept, several ? " (" : "", several ? f->path : "",
		       several ? ")" : "");
	if (lstat(f->path, &st) == 0)
		f->size = st.st_size;
}

void gp_trace_repair_all(struct gp_trace_file *files, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct stat st;

		/* repairing a file still being written would lose what follows */
		files[i].running = files[i].pid > 0 && process_alive(files[i].pid);
		if (!files[i].running)
			repair_trace(&files[i], count > 1);
		else if (lstat(files[i].path, &st) == 0)
			files[i].size = st.st_size;
	}
}

void gp_trace_files_free(struct gp_trace_file *files, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(files[i].path);
	free(files);
}
