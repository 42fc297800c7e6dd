/* What `gpuprof --trace` says once PROGRAM has ended: the traces it left,
 * their sizes, and where to open them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "viewer/analyze/units.h"
#include "viewer/cli.h"

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

void gp_trace_report(const struct gp_trace_run *r)
{
	struct gp_trace_file *files = NULL;
	size_t count = 0, i;
	int err;

	err = gp_trace_collect(r, &files, &count);
	if (err) {
		gp_msg("cannot look for the traces beside %s: %s", r->output, strerror(-err));
		goto cleanup;
	}
	if (count == 0) {
		gp_msg("nothing was recorded: %s made no CUDA call, or the recorder could "
		       "not start (see the gpuprof: lines above)", r->name);
		goto cleanup;
	}
	gp_trace_repair_all(files, count);
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
