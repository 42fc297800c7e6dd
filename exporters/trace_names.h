/* Where each process of a traced run writes its trace: the one rule that the
 * recorder (profiler/inject.c, when it opens its trace) and the launcher and
 * compare (viewer/, when they look for a run's traces) both follow.
 *
 * The program gpuprof started writes the output file itself. Every other
 * process that uses CUDA gets its own file, because the recorders of several
 * processes cannot share one gzip stream: <stem>.<pid>.json.gz for an output
 * <stem>.json.gz, else <output>.<pid>. */
#ifndef GPUPROF_TRACE_NAMES_H
#define GPUPROF_TRACE_NAMES_H

#include <stddef.h>
#include <sys/types.h>

#define GP_TRACE_SUFFIX ".json.gz"

/* The trace of process pid for the output file output (a path or a file
 * name: only its end is looked at). 0, or -ENAMETOOLONG when buf is too
 * small. */
int gp_child_trace_path(char *buf, size_t size, const char *output, pid_t pid);

/* A flight recorder's dump number n (>= 1; 0: the default trace's start,
 * up to its size cap) of the trace output: <stem>.dump<n>.json.gz, else
 * <output>.dump<n>. 0 or -ENAMETOOLONG. */
int gp_dump_trace_path(char *buf, size_t size, const char *output, unsigned n);

/* Whether name (a file name, no directory) is a dump's, as
 * gp_dump_trace_path() makes them: ...dump<digits>.json.gz (or ends in
 * .dump<digits>). A run directory's listing and the launcher's report keep
 * them apart from the processes' own traces. */
int gp_is_dump_trace_name(const char *name);

/* The inverse, for finding the children's traces after a run: the pid when
 * name (a file name, no directory) is what gp_child_trace_path() makes of
 * the output file name out_name, else -1. */
pid_t gp_child_trace_pid(const char *out_name, const char *name);

/* In a run directory (`gpuprof --trace -o RUN/`, GPUPROF_RUN_DIR), every
 * process that uses CUDA writes RUN/rank<R>.<pid>.json.gz where its
 * launcher gave it a rank (RANK, else SLURM_PROCID; rank < 0: none), else
 * RUN/proc.<host>.<pid>.json.gz: the pid keeps a rank's own CUDA-using
 * children, and processes of several hosts, apart. The host is written
 * with every byte but [A-Za-z0-9._-] as '_', at most GP_RUN_HOST_MAX
 * bytes of it. 0, or -ENAMETOOLONG when buf is too small. */
#define GP_RUN_HOST_MAX 64
int gp_run_trace_path(char *buf, size_t size, const char *dir, long long rank, const char *host,
		      pid_t pid);

/* Each launcher of a run (one per node under srun) lists what it traced
 * in RUN/manifest.<host>.<launcher pid>.json (viewer/run/). */
#define GP_RUN_MANIFEST_PREFIX "manifest."
#define GP_RUN_MANIFEST_SUFFIX ".json"
int gp_run_manifest_name(char *buf, size_t size, const char *host, pid_t pid);

/* The host as it appears in those names. */
void gp_run_host_name(char *buf, size_t size, const char *host);

#endif
