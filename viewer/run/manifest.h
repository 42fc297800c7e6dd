/* Internals of viewer/run/: a manifest's keys (MANIFEST.md, one place) and
 * one manifest as read (manifest.c), for open.c. */
#ifndef GPUPROF_RUN_MANIFEST_H
#define GPUPROF_RUN_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"

#define MF_SCHEMA "schema"
#define MF_VERSION "version"
#define MF_JOB "job"
#define MF_HOST "host"
#define MF_LAUNCHER_PID "launcher_pid"
#define MF_COMMAND "command"
#define MF_CWD "cwd"
#define MF_START "start_unix_ns"
#define MF_END "end_unix_ns"
#define MF_EXIT "exit_status"
#define MF_SIGNAL "signal"
#define MF_TRACES "traces"
#define MF_FILE "file"
#define MF_PID "pid"
#define MF_RANK "rank"
#define MF_WORLD_SIZE "world_size"
#define MF_LOCAL_RANK "local_rank"
#define MF_LOCAL_WORLD_SIZE "local_world_size"
#define MF_BYTES "bytes"
#define MF_COMPLETE "complete"

struct mf_trace {
	char *file;
	int64_t pid, rank; /* rank -1: none */
	int complete;      /* -1: not said */
};

struct mf {
	struct gp_run_launch launch; /* its strings owned */
	struct mf_trace *t;
	size_t n;
};

/* text[0..len) of the manifest file (its name, for messages) into *out
 * (mf_free). 0, -EINVAL (err says what is wrong), -ENOMEM. */
int mf_parse(const char *file, const char *text, size_t len, struct mf *out, char *err, size_t cap);
void mf_free(struct mf *m);

#endif
