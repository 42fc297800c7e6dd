/* What `gpuprof --trace` says once PROGRAM has ended: the traces it left,
 * their sizes, and where to open them. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exporters/trace_names.h"
#include "launch.h"
#include "viewer/analyze/result/units.h"
#include "viewer/cli.h"
#include "viewer/run/run.h"

/* Where to look next: Perfetto, or `gpuprof analyze` with every trace no
 * longer being written (the processes of one run are analyzed together). */
static void print_open_hint(const struct gp_trace_file *files, size_t count)
{
	const char *them = count > 1 ? "them" : "it";
	size_t len = 0, i;
	char *paths, *p;

	for (i = 0; i < count; i++)
		if (!files[i].running)
			len += strlen(files[i].path) + 1;
	paths = len ? malloc(len) : NULL;
	if (!paths) {
		gp_msg("open %s in https://ui.perfetto.dev (Open trace file)", them);
		return;
	}
	p = paths;
	for (i = 0; i < count; i++) {
		if (files[i].running)
			continue;
		if (p != paths)
			*p++ = ' ';
		p = stpcpy(p, files[i].path);
	}
	gp_msg("open %s in https://ui.perfetto.dev (Open trace file), or run: gpuprof analyze %s",
	       them, paths);
	free(paths);
}

/* This launcher's manifest: what it traced, how PROGRAM ended. */
static void write_manifest(const struct gp_trace_run *r, int wstatus,
			   const struct gp_trace_file *files, size_t count)
{
	struct gp_run_found *found = calloc(count ? count : 1, sizeof(*found));
	char err[1024] = "", *cwd = getcwd(NULL, 0);
	struct timespec now;
	struct gp_run_launch_info l = { 0 };

	if (!found) {
		gp_msg("cannot write the run's manifest: out of memory");
		free(cwd);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; i < count; i++)
		found[i] = (struct gp_run_found){ files[i].path, !files[i].running, &files[i].meta };
	l.job = r->job;
	l.host = r->host;
	l.pid = getpid();
	l.argv = r->exec_argv;
	l.cwd = cwd;
	l.start_unix_ns = gp_trace_unix_ns(&r->start);
	l.end_unix_ns = gp_trace_unix_ns(&now);
	l.signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
	l.exit_status = WIFSIGNALED(wstatus) ? -1 : WEXITSTATUS(wstatus);
	if (gp_run_write_manifest(r->run_dir, &l, found, count, err, sizeof(err)))
		gp_msg("cannot write the run's manifest: %s", err);
	free(found);
	free(cwd);
}

/* A run directory: its traces by name, and the commands that read it. */
static void report_run_dir(const struct gp_trace_run *r, int wstatus, struct gp_trace_file *files,
			   size_t count)
{
	char size[32];

	write_manifest(r, wstatus, files, count);
	gp_msg("run directory %s/: %zu trace%s, one per process that used CUDA:", r->run_dir, count,
	       count > 1 ? "s" : "");
	for (size_t i = 0; i < count; i++) {
		const struct gp_trace_file *f = &files[i];
		const struct gp_tr_meta *m = &f->meta;
		const char *name = strrchr(f->path, '/') + 1;

		an_fmt_bytes(size, sizeof(size), (uint64_t)f->size);
		if (m->rank >= 0 && m->world_size > 0)
			gp_msg("  %s (rank %lld of %lld, %s)", name, (long long)m->rank,
			       (long long)m->world_size, size);
		else if (m->rank >= 0)
			gp_msg("  %s (rank %lld, %s)", name, (long long)m->rank, size);
		else
			gp_msg("  %s (%s)", name, size);
		if (f->running)
			gp_msg("  process %ld is still running and writing it; once it ends: "
			       "gpuprof recover %s", (long)f->pid, f->path);
	}
	gp_msg("next: gpuprof analyze %s/ (every rank side by side), gpuprof merge %s/ -o "
	       "merged.json.gz (one Perfetto trace), gpuprof report %s/", r->run_dir, r->run_dir,
	       r->run_dir);
}

/* The flight recorder's dumps written in this run (--window): beside the
 * traces, each a complete trace. */
static void report_dumps(const struct gp_trace_run *r)
{
	char *dir = r->run_dir ? strdup(r->run_dir) : strdup(r->output), *slash, size[32];
	struct dirent *e;
	struct stat st;
	size_t n = 0;
	DIR *d;

	if (!dir)
		return;
	if (!r->run_dir && (slash = strrchr(dir, '/')))
		*(slash == dir ? slash + 1 : slash) = 0;
	if (!(d = opendir(dir))) {
		free(dir);
		return;
	}
	while ((e = readdir(d))) {
		if (!gp_is_dump_trace_name(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_mtim.tv_sec < r->start.tv_sec)
			continue;
		if (!n++)
			gp_msg("flight recorder dumps (each a whole trace: gpuprof analyze FILE):");
		an_fmt_bytes(size, sizeof(size), (uint64_t)st.st_size);
		gp_msg("  %s/%s (%s)", dir, e->d_name, size);
	}
	closedir(d);
	free(dir);
}

void gp_trace_report(const struct gp_trace_run *r, int wstatus)
{
	struct gp_trace_file *files = NULL;
	size_t count = 0, i;
	int err;

	err = gp_trace_collect(r, &files, &count);
	if (err) {
		gp_msg("cannot look for the traces %s %s: %s", r->run_dir ? "in" : "beside",
		       r->run_dir ? r->run_dir : r->output, strerror(-err));
		goto cleanup;
	}
	if (count == 0 && r->run_dir)
		write_manifest(r, wstatus, files, count);
	if (count == 0) {
		gp_msg("nothing was recorded: %s made no CUDA call, or the recorder could "
		       "not start (see the gpuprof: lines above)", r->name);
		goto cleanup;
	}
	gp_trace_repair_all(files, count);
	if (r->flight)
		report_dumps(r);
	if (r->run_dir) {
		report_run_dir(r, wstatus, files, count);
		goto cleanup;
	}
	if (count > 1)
		gp_msg("%zu traces written, one per process that used CUDA:", count);
	for (i = 0; i < count; i++) {
		const struct gp_trace_file *f = &files[i];
		char size[32];

		an_fmt_bytes(size, sizeof(size), (uint64_t)f->size);
		if (count == 1)
			gp_msg("trace written to %s (%s)", f->path, size);
		else
			gp_msg("  %s (%s)", f->path, size);
		if (f->running)
			gp_msg("  process %ld is still running and writing it; once it ends: "
			       "gpuprof recover %s", (long)f->pid, f->path);
	}
	print_open_hint(files, count);
cleanup:
	gp_trace_files_free(files, count);
}
