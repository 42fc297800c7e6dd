/* A run directory: the traces of every process of one job, and a manifest
 * from each launcher that made them, so that one path names the whole run.
 *
 *   gpuprof --trace -o RUN/ -- torchrun --nproc-per-node 8 train.py
 *   srun gpuprof --trace -o RUN/ -- python train.py       (one launcher per task)
 *
 * The recorder of every process that uses CUDA writes RUN/rank<R>.<pid>.json.gz
 * (exporters/trace_names.h has the rule); each launcher, once its program
 * has ended, writes RUN/manifest.<host>.<pid>.json listing the traces its
 * own processes wrote (MANIFEST.md says what one holds). Readers
 * (analyze, compare, check, report, merge) open the directory with
 * gp_run_open(): the manifests say which files are the run's; each trace's
 * own gpuprof.meta says which rank, host and clock it is.
 *
 * Manifests and traces are untrusted input: anything wrong ends the call
 * with -EINVAL and one line in err. Every function returns 0 or -errno.
 *
 * Ownership: a struct gp_run and everything it points to are the caller's,
 * freed with gp_run_free(). */
#ifndef GPUPROF_RUN_H
#define GPUPROF_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace_meta.h"

#define GP_RUN_SCHEMA "gpuprof.run/1"
/* A manifest larger than this is not one: 4 MiB holds some 20,000 traces. */
#define GP_RUN_MANIFEST_MAX (4u << 20)
/* Traces one run may have: far above any job's processes per directory. */
#define GP_RUN_MAX_TRACES 65536

/* What a trace's first event, gpuprof.meta, says of its process:
 * struct gp_tr_meta, read by gp_tr_read_meta() (exporters/trace_meta.h). */

/* The order of a run's processes: ranks first, by rank; then the rest by
 * host, then pid. <0, 0, >0 as strcmp. */
int gp_run_meta_order(const struct gp_tr_meta *a, const struct gp_tr_meta *b);

/* One trace of a run. */
struct gp_run_trace {
	char *path;          /* dir/file */
	char *file;          /* the name inside the directory */
	struct gp_tr_meta meta;
	int listed;          /* named by a manifest */
	int complete;        /* the manifest's word: the launcher found it complete
			      * (or repaired it); -1: not said */
	uint64_t bytes;      /* its size on disk */
};

/* One launcher's manifest. */
struct gp_run_launch {
	char *manifest;      /* the file's name inside the directory */
	char *job;           /* the job it belongs to: the same in every manifest of a run */
	char *host;
	int64_t pid;         /* the launcher's */
	char *command;       /* PROGRAM ARGS joined by spaces */
	int64_t start_unix_ns, end_unix_ns;
	int exit_status;     /* -1 when killed by a signal */
	int signal;          /* 0: none */
};

struct gp_run {
	char *dir;
	char *job;                  /* NULL: no manifest */
	struct gp_run_launch *launches;
	size_t nlaunches;
	struct gp_run_trace *traces; /* by rank (none last), then host, then pid */
	size_t ntraces;
	int64_t world_size;         /* the traces' (the largest said); -1: not said */
	char **notes;               /* remarks worth a line: missing ranks, no manifest */
	size_t nnotes;
};

/* Whether name (no directory) is named as the recorder names a run's
 * traces: rank*.json.gz, proc.*.json.gz, a flight recorder's dumps
 * (...dumpN.json.gz) not. A gp_run_list filter: ctx unused. */
int gp_run_is_trace_name(const char *name, const void *ctx);

/* The names in dir (not the hidden ones) that keep(name, ctx) wants,
 * sorted, so that a listing is the same every time: *out is a new array
 * of new strings (gp_run_paths_free). */
int gp_run_list(const char *dir, int (*keep)(const char *name, const void *ctx), const void *ctx,
		char ***out, size_t *nout, char *err, size_t cap);

/* Whether path is a directory. */
int gp_run_is_dir(const char *path);

/* Opens the run in dir: its manifests (every trace they list must be there
 * and be what they say), or, where there is none (a launcher that did not
 * finish, traces copied by hand), every trace in it, with a note. Refuses a
 * directory with manifests of two jobs, or with no trace at all. */
int gp_run_open(const char *dir, struct gp_run **out, char *err, size_t cap);
void gp_run_free(struct gp_run *run);

/* The traces that args name, for a command that takes TRACE...: a file
 * is itself; a directory is its run's traces (gp_run_open), its notes
 * passed to note(). *out is a new array of new strings, in the order
 * given (gp_run_paths_free). */
int gp_run_expand(const char *const *args, size_t n, char ***out, size_t *nout,
		  void (*note)(void *ctx, const char *line), void *ctx, char *err, size_t cap);
void gp_run_paths_free(char **v, size_t n);

/* ---- writing (the launcher, viewer/trace/) ---- */

/* What a launcher knows of its part of the run. Borrowed strings. */
struct gp_run_launch_info {
	const char *job;
	const char *host;
	pid_t pid;
	char *const *argv;     /* PROGRAM ARGS, NULL-terminated */
	const char *cwd;       /* NULL: not said */
	int64_t start_unix_ns, end_unix_ns;
	int exit_status;       /* -1 when killed by a signal */
	int signal;
};

/* The job a launcher belongs to: Slurm's job and step where srun started
 * it (every task of a step shares it), else one of its own. buf gets it. */
void gp_run_job_id(char *buf, size_t cap, const char *host, pid_t pid, int64_t start_unix_ns);

/* A trace the launcher found: path (in the directory), whether it is
 * complete (its process ended; the launcher repaired it if cut short),
 * and its gpuprof.meta as the launcher read it (borrowed). */
struct gp_run_found {
	const char *path;
	int complete;
	const struct gp_tr_meta *meta;
};

/* Writes dir's manifest for launcher l, listing the traces found, whole
 * or not at all (a temporary file renamed into place). */
int gp_run_write_manifest(const char *dir, const struct gp_run_launch_info *l,
			  const struct gp_run_found *found, size_t nfound, char *err, size_t cap);

/* What dir holds before a run starts: *other is set when a manifest there
 * names a job other than job (or does not read); *traces counts the
 * traces named as a run's are. */
int gp_run_dir_jobs(const char *dir, const char *job, int *other, int *traces, char *err,
		    size_t cap);

/* --force: removes dir's manifests of jobs other than keep_job and the
 * traces they list; with unlisted, also the traces named as a run's are
 * (rank*.json.gz, proc.*.json.gz) that no manifest lists (not under srun,
 * where they may be another task's of this very job). Other files are
 * left alone. */
int gp_run_clear(const char *dir, const char *keep_job, int unlisted, char *err, size_t cap);

#endif
