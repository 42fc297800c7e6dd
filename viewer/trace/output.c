/* Where `gpuprof --trace` writes the trace: -o, or a name made from
 * PROGRAM's; made absolute and checked before the program starts. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exporters/trace_names.h"
#include "launch.h"
#include "viewer/cli.h"
#include "viewer/run/run.h"

/* Programs that start the processes of a distributed job: their traces go
 * to a run directory unless -o names a file. */
static bool starts_a_job(char *const *program)
{
	static const char *const launchers[] = { "torchrun", "mpirun", "mpiexec", "srun",
						 "accelerate", "deepspeed", "horovodrun", NULL };
	static const char *const modules[] = { "torch.distributed.run", "torch.distributed.launch",
					       "accelerate.commands.launch", "deepspeed.launcher.runner",
					       NULL };
	const char *base = strrchr(program[0], '/');

	base = base ? base + 1 : program[0];
	for (size_t i = 0; launchers[i]; i++)
		if (strcmp(base, launchers[i]) == 0)
			return true;
	/* python -m torch.distributed.run ... */
	if (strncmp(base, "python", 6) != 0)
		return false;
	for (size_t a = 1; program[a] && program[a][0] == '-'; a++) {
		const char *mod = strcmp(program[a], "-m") == 0 ? program[a + 1] :
				  strncmp(program[a], "-m", 2) == 0 ? program[a] + 2 : NULL;

		for (size_t i = 0; mod && modules[i]; i++)
			if (strcmp(mod, modules[i]) == 0)
				return true;
		if (mod)
			break;
	}
	return false;
}

/* gpuprof-<PROGRAM's base name, without .py>-<local time>.json.gz, or that
 * without the suffix for a run directory */
static int default_output(const char *program, bool dir, char **out)
{
	const char *base = strrchr(program, '/');
	char name[65], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t len, i;

	base = base ? base + 1 : program;
	len = strlen(base);
	if (gp_trace_is_python_script(base))
		len -= 3;
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	/* a file name anyone can type, whatever the program is called */
	for (i = 0; i < len; i++) {
		char c = base[i];
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		name[i] = plain ? c : '_';
	}
	name[len] = '\0';
	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm))
		return -EINVAL;
	if (asprintf(out, "gpuprof-%s-%s%s", len ? name : "program", stamp,
		     dir ? "/" : GP_TRACE_SUFFIX) < 0)
		return -ENOMEM;
	return 0;
}

/* A run directory at path: made if missing (its parent must be there),
 * writable, and holding no other run unless --force clears it. */
static int resolve_run_dir(const struct gp_trace_settings *s, struct gp_trace_run *r,
			   const char *path)
{
	char err_line[1024];
	bool slurm = getenv("SLURM_JOB_ID") && *getenv("SLURM_JOB_ID");
	int other, traces, err;
	struct timespec now;

	if (mkdir(path, 0777) != 0 && errno != EEXIST) {
		err = -errno;
		gp_msg("cannot make the run directory %s: %s", path, strerror(-err));
		return err;
	}
	r->run_dir = realpath(path, NULL);
	if (!r->run_dir || !gp_run_is_dir(r->run_dir)) {
		err = r->run_dir ? -ENOTDIR : -errno;
		gp_msg("cannot use the run directory %s: %s", path, strerror(-err));
		return err;
	}
	if (access(r->run_dir, W_OK | X_OK) != 0) {
		err = -errno;
		gp_msg("cannot write into the run directory %s: %s", r->run_dir, strerror(-err));
		return err;
	}
	gethostname(r->host, sizeof(r->host) - 1);
	clock_gettime(CLOCK_REALTIME, &now);
	gp_run_job_id(r->job, sizeof(r->job), r->host, getpid(), gp_trace_unix_ns(&now));
	err = gp_run_dir_jobs(r->run_dir, r->job, &other, &traces, err_line,
			      sizeof(err_line));
	if (err) {
		gp_msg("%s", err_line);
		return err;
	}
	/* under srun, the traces and manifests of this job's other tasks may
	 * be there already; anything else is an earlier run's */
	if (!other && (!traces || slurm))
		return 0;
	if (!s->force) {
		gp_msg("%s holds another run's %s (--force replaces them, or give a new directory)",
		       r->run_dir, other ? "manifest and traces" : "traces");
		return -EEXIST;
	}
	err = gp_run_clear(r->run_dir, r->job, !slurm, err_line, sizeof(err_line));
	if (err)
		gp_msg("%s", err_line);
	return err;
}

/* Makes the output path absolute (the program may chdir before it uses CUDA)
 * and refuses what would make the recorder fail late, after a long run, or
 * write where it should not: a missing or read-only directory, an existing
 * file, a symbolic link. */
int gp_trace_resolve_output(const struct gp_trace_settings *s, struct gp_trace_run *r)
{
	char *made = NULL, *dir = NULL, *real_dir = NULL;
	const char *path = s->output, *slash, *base;
	struct stat st;
	int err = 0;

	if (!path) {
		err = default_output(s->program[0], starts_a_job(s->program), &made);
		if (err) {
			gp_msg("cannot name the trace: %s", strerror(-err));
			goto cleanup;
		}
		path = made;
	}
	/* DIR/, or a directory that is there: a run directory */
	if (path[strlen(path) - 1] == '/' || gp_run_is_dir(path)) {
		err = resolve_run_dir(s, r, path);
		goto cleanup;
	}
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		gp_msg("-o %s: give a file name, or a directory ending in '/'", path);
		err = -EISDIR;
		goto cleanup;
	}
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir) {
		err = -ENOMEM;
		gp_msg("%s", strerror(-err));
		goto cleanup;
	}
	/* realpath() also accepts a file; the S_ISDIR test catches that */
	real_dir = realpath(dir, NULL);
	if (!real_dir || stat(real_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		err = real_dir ? -ENOTDIR : -errno;
		gp_msg("cannot write the trace to %s: directory %s: %s", path, dir,
		       strerror(-err));
		goto cleanup;
	}
	if (access(real_dir, W_OK | X_OK) != 0) {
		err = -errno;
		gp_msg("cannot write the trace to %s: directory %s: %s", path, dir,
		       strerror(-err));
		goto cleanup;
	}
	if (asprintf(&r->output, "%s/%s", strcmp(real_dir, "/") ? real_dir : "", base) < 0) {
		r->output = NULL;
		err = -ENOMEM;
		gp_msg("%s", strerror(-err));
		goto cleanup;
	}
	/* lstat: a symbolic link is judged itself, never what it points to */
	if (lstat(r->output, &st) == 0) {
		if (S_ISLNK(st.st_mode) && !s->force) {
			gp_msg("%s is a symbolic link; gpuprof does not write through one "
			       "(--force replaces the link itself)", r->output);
			err = -EEXIST;
		} else if (!s->force) {
			gp_msg("%s already exists (--force replaces it)", r->output);
			err = -EEXIST;
		}
		r->replace_output = true;
	} else if (errno != ENOENT) {
		err = -errno;
		gp_msg("cannot write the trace to %s: %s", r->output, strerror(-err));
	}
cleanup:
	if (err) {
		free(r->output);
		r->output = NULL;
		free(r->run_dir);
		r->run_dir = NULL;
	}
	free(real_dir);
	free(dir);
	free(made);
	return err;
}

int gp_trace_set_aside(struct gp_trace_run *r)
{
	int err;

	/* beside it, so that rename() cannot cross file systems; the name is
	 * no trace's (gp_trace_collect looks for *.json.gz) */
	if (asprintf(&r->aside, "%s.gpuprof-old.%ld", r->output, (long)getpid()) < 0) {
		r->aside = NULL;
		gp_msg("cannot replace %s: %s", r->output, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (rename(r->output, r->aside) == 0)
		return 0;
	err = -errno;
	free(r->aside);
	r->aside = NULL;
	if (err == -ENOENT) /* gone since it was looked at: nothing to keep */
		return 0;
	gp_msg("cannot replace %s: %s", r->output, strerror(-err));
	return err;
}

void gp_trace_settle_aside(struct gp_trace_run *r)
{
	struct stat st;

	if (!r->aside)
		return;
	if (lstat(r->output, &st) == 0) {
		if (unlink(r->aside) != 0)
			gp_msg("the old trace is left in %s: %s", r->aside, strerror(errno));
	} else if (rename(r->aside, r->output) == 0) {
		gp_msg("%s was not replaced: nothing new was written there", r->output);
	} else {
		gp_msg("the old trace is left in %s: %s", r->aside, strerror(errno));
	}
	free(r->aside);
	r->aside = NULL;
}
