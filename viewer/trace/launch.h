/* What the parts of `gpuprof --trace` share. viewer/cmd_trace.c is the
 * command's flow; each file here does one job of it:
 *
 *   options.c    the command line, into struct gp_trace_settings
 *   output.c     the trace's path: named, made absolute, checked
 *   program.c    PROGRAM as execvp() will find it (PATH), .py run by Python
 *   recorder.c   the recorder library: found, test-loaded, put in the
 *                environment (CUDA_INJECTION64_PATH)
 *   torch_env.c  the mode and the environment of a PyTorch program
 *   run.c        signals, fork/exec/wait, how PROGRAM ended
 *   traces.c     the run's traces (its own and its children's): found,
 *                repaired when cut short
 *   report.c     what the run left, and where to look next
 *
 * Every message is a "gpuprof: " line on stderr (gp_msg), said where the
 * failure is found. */
#ifndef GPUPROF_TRACE_LAUNCH_H
#define GPUPROF_TRACE_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "torch_env.h"
#include "viewer/run/run.h"

struct gp_trace_settings {
	const char *output; /* -o as given; NULL: named after PROGRAM */
	bool force;
	const char *python; /* NULL: $GPUPROF_PYTHON, else python3 */
	enum gp_mode mode;  /* AUTO: native for Python programs, else cuda */
	bool ops;           /* --ops: PyTorch op ranges too */
	bool history;       /* --torch-history: PyTorch's allocator history (native) */
	bool stacks;        /* --stacks: each PyTorch block's Python stack (native) */
	long window_s;      /* --window: a flight recorder of so many seconds; 0: off */
	const char *dump_at;    /* --dump-at (checked), or NULL */
	const char *dump_steps; /* --dump-steps (checked), or NULL */
	const char *trace_cap;  /* --trace-cap (checked), or NULL */
	char **program;     /* PROGRAM ARGS..., NULL-terminated, inside argv */
};

/* What one run works out before it starts the program. Owns output,
 * recorder and py_argv (freed by the command); the rest is borrowed from
 * argv or the environment. */
struct gp_trace_run {
	const char *name;       /* PROGRAM as typed, for messages */
	char *output;           /* absolute; NULL in a run directory */
	char *run_dir;          /* absolute: -o DIR/, or a launcher's default
				 * (gp_trace_resolve_output); NULL: one file */
	char job[128];          /* the run directory's job (viewer/run/run.h) */
	char host[256];         /* this host's name, read with the job's */
	pid_t child;            /* PROGRAM's pid, once started */
	bool replace_output;    /* --force and something is there */
	char *aside;            /* that, moved here until a new trace replaces it
				 * (gp_trace_set_aside); NULL: nothing aside */
	char *recorder;         /* absolute; NULL: not recording */
	bool flight;            /* --window: SIGUSR1 asks for dumps */
	char **exec_argv;       /* settings' program, or py_argv */
	char **py_argv;         /* PYTHON PROGRAM.py ARGS... */
	struct timespec start;  /* traces older than this are not ours */
};

/* Unix time in ns, as the run directory's manifests and traces give it. */
static inline int64_t gp_trace_unix_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* options.c: the options before PROGRAM into *s. 0 when PROGRAM may run,
 * GP_TRACE_HELP for --help, else the exit status of a usage error (said). */
enum { GP_TRACE_HELP = -1 };
int gp_trace_options(int argc, char **argv, struct gp_trace_settings *s);

/* output.c: r->output, absolute, from -o or named after PROGRAM; or
 * r->run_dir, a run directory (-o ending in '/', an existing directory,
 * or the default for PROGRAMs that start several processes: torchrun,
 * mpirun...), made if missing. Refuses (says why, -errno) what would make
 * the recorder fail late or write where it should not: a run directory
 * holding another run is cleared only with --force. */
int gp_trace_resolve_output(const struct gp_trace_settings *s, struct gp_trace_run *r);
/* --force: what is at r->output (a symbolic link itself, never what it
 * points to) is moved to r->aside before PROGRAM runs, so that the recorder
 * writes a new file; gp_trace_settle_aside() then deletes it where a new
 * trace was written, and puts it back where none was (no driver, no CUDA
 * call), saying so. 0 or -errno (said). */
int gp_trace_set_aside(struct gp_trace_run *r);
void gp_trace_settle_aside(struct gp_trace_run *r);

/* program.c */
bool gp_trace_is_python_script(const char *program);
/* What execvp() would run for name: a new string in *path, or -errno
 * (-ENOENT, -EACCES, ...) as execvp() would fail. */
int gp_trace_find_program(const char *name, char **path);
/* r->exec_argv: PROGRAM as given, or PYTHON PROGRAM.py ARGS...; -errno (said)
 * when it cannot run. */
int gp_trace_resolve_program(const struct gp_trace_settings *s, struct gp_trace_run *r);

/* recorder.c: sets r->recorder and the recorder's environment when this run
 * can record; otherwise says why and leaves it NULL (the program runs
 * anyway). -errno only when the environment cannot be set. */
int gp_trace_setup_recorder(struct gp_trace_run *r);

/* torch_env.c: the mode (auto: native for Python programs) and its
 * environment, with the Python hooks beside r->recorder. 0 or -errno (said). */
int gp_trace_setup_mode(const struct gp_trace_settings *s, const struct gp_trace_run *r);

/* run.c: forks and execs r->exec_argv, waits for it; *wstatus gets its
 * wait status. 0, -errno from the launcher, or the exec failure as a
 * positive errno (all said). */
int gp_trace_run_program(struct gp_trace_run *r, int *wstatus);
/* gpuprof's exit status for PROGRAM's wait status: its own, or 128 + the
 * signal that killed it (said). */
int gp_trace_exit_status(const struct gp_trace_run *r, int wstatus);

/* traces.c */
struct gp_trace_file {
	char *path;   /* owned */
	pid_t pid;    /* 0 for the root process's trace */
	bool running; /* its process still runs: not checked */
	off_t size;
	struct gp_tr_meta meta; /* in a run directory: its gpuprof.meta, read
				  * once, when it was found */
};
/* The root trace and the traces of PROGRAM's children written during this
 * run, by pid, into a new array *files (gp_trace_files_free). 0 or -errno. */
int gp_trace_collect(const struct gp_trace_run *r, struct gp_trace_file **files, size_t *count);
/* Repairs each trace whose process has ended (recovery leaves a complete
 * one alone) and notes every size. */
void gp_trace_repair_all(struct gp_trace_file *files, size_t count);
void gp_trace_files_free(struct gp_trace_file *files, size_t count);

/* report.c: finds, repairs and lists the run's traces (in a run
 * directory, writes this launcher's manifest), then where to open them. */
void gp_trace_report(const struct gp_trace_run *r, int wstatus);

#endif
