/* The recorder's configuration: every variable it reads (the GPUPROF_*
 * ones of exporters/env_vars.def, and the launchers' RANK, WORLD_SIZE...),
 * read once, at injection, into one struct that the rest of the recorder
 * reads. config.c is the recorder's only caller of getenv. */
#ifndef GPUPROF_CONFIG_H
#define GPUPROF_CONFIG_H

#include "parts.h"

#include <stddef.h>
#include <stdint.h>

/* How the writer asks CUPTI for its buffers (GPUPROF_FLUSH). */
enum gp_cupti_flush {
	GP_CUPTI_FLUSH_DEFAULT, /* completed buffers */
	GP_CUPTI_FLUSH_FORCED,  /* also records of kernels still running */
	GP_CUPTI_FLUSH_NONE,    /* CUPTI's own periodic flush only */
};

struct gp_rec_config {
	/* Where the trace goes (inject.c): strings owned by the configuration,
	 * NULL where the variable is unset. */
	const char *output;   /* GPUPROF_OUTPUT */
	const char *run_dir;  /* GPUPROF_RUN_DIR */
	const char *root_pid; /* GPUPROF_ROOT_PID, as written */
	/* Which process of the job this is, from torch.distributed's launchers
	 * (Slurm's srun where torchrun is not used): -1 where not said. */
	long long rank, world_size, local_rank, local_world_size;
	int has_job_start;          /* GPUPROF_JOB_START_UNIX_NS is a number */
	uint64_t job_start_unix_ns;
	const char *mode;           /* GPUPROF_MODE; NULL: unset */

	/* What to record: GPUPROF_RECORD's parts (default all, in tensor mode
	 * all but pools); memory is added by the recorder (inject.c). */
	unsigned parts;
	int patch;                  /* GPUPROF_PATCH not 0: patch the callers */
	size_t host_events;         /* GPUPROF_HOST_EVENTS */
	size_t buffer_bytes;        /* GPUPROF_BUFFER_MB, in bytes */
	enum gp_cupti_flush flush;  /* GPUPROF_FLUSH */
	int cupti_flush_ms;         /* GPUPROF_CUPTI_FLUSH_MS */
	int flush_ms;               /* GPUPROF_FLUSH_MS */

	/* The flight recorder (flight.h): 0 seconds, off */
	int window_s;               /* GPUPROF_WINDOW_S */
	size_t ring_bytes;          /* GPUPROF_RING_MB, in bytes */
	int seal_ms;                /* GPUPROF_SEAL_MS */
	uint64_t dump_at_bytes;     /* GPUPROF_DUMP_AT: bytes, or */
	unsigned dump_at_permille;  /* a share of the device; both 0: none */
	uint64_t dump_step_first;   /* GPUPROF_DUMP_STEPS; 0: none */
	uint64_t dump_step_last;
	uint64_t trace_cap_bytes;   /* GPUPROF_TRACE_CAP; 0: none */

	/* The program's end. */
	int exit_wait_ms;           /* GPUPROF_EXIT_WAIT_MS */
	int signal_wait_ms;         /* GPUPROF_SIGNAL_WAIT_MS */
	int signals;                /* GPUPROF_SIGNALS: watch the signals */
};

/* Reads the configuration, once per process: the first injection, CUDA's
 * or NVTX's, reads it; every later call returns that call's result. A value
 * out of its bounds, or an unknown part, is said on stderr (once) and the
 * default used. 0, or -ENOMEM (said nothing). */
int gp_rec_config_load(void);
/* The configuration, once gp_rec_config_load() returned 0. */
const struct gp_rec_config *gp_rec_config(void);

/* A comma list of part names (GPUPROF_RECORD's syntax) as GP_REC_* bits;
 * unknown names are said on stderr, under what's name, and left out. */
unsigned gp_rec_parts_parse(const char *what, const char *list);
/* Writes parts as GPUPROF_RECORD's names, comma-separated ("memory" too;
 * "none" when empty), into out; truncated to cap. */
void gp_rec_parts_names(unsigned parts, char *out, size_t cap);

#endif
