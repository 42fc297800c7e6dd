/* The recorder's configuration (profiler/config.c): read once per process,
 * into one struct, with exporters/env_vars.def's defaults and bounds. Each
 * case runs in a child of its own, as a process reads it only once; what
 * the recorder says goes to a pipe and is checked too. */
#include "config.h"

#include "env_vars.h"
#include "state.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The variables the cases set, cleared before each. */
static const char *const vars[] = {
	GP_ENV_OUTPUT, GP_ENV_RUN_DIR, GP_ENV_ROOT_PID, GP_ENV_JOB_START_UNIX_NS, GP_ENV_MODE,
	GP_ENV_RECORD, GP_ENV_PATCH, GP_ENV_HOST_EVENTS, GP_ENV_BUFFER_MB, GP_ENV_FLUSH,
	GP_ENV_CUPTI_FLUSH_MS, GP_ENV_FLUSH_MS, GP_ENV_EXIT_WAIT_MS, GP_ENV_SIGNAL_WAIT_MS,
	GP_ENV_SIGNALS, "RANK", "SLURM_PROCID", "WORLD_SIZE", "SLURM_NTASKS", "LOCAL_RANK",
	"SLURM_LOCALID", "LOCAL_WORLD_SIZE",
};

static char said[4096]; /* what the case's recorder said on stderr */

/* Runs fn in a child with a clean environment, its stderr in said. The
 * child's checks decide its exit status: 0 when all passed. */
static int run_case(const char *name, void (*fn)(void))
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			unsetenv(vars[i]);
		dup2(fds[1], STDERR_FILENO); /* failed checks too: the parent prints them */
		close(fds[1]);
		fn();
		_exit(check_failures ? 1 : 0);
	}
	close(fds[1]);
	/* the child's messages and checks' failures: said's first 4 KiB */
	size_t n = 0;
	ssize_t r;
	while (n + 1 < sizeof(said) && (r = read(fds[0], said + n, sizeof(said) - 1 - n)) > 0)
		n += (size_t)r;
	said[n] = '\0';
	close(fds[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!ok)
		fprintf(stderr, "test_config: case %s failed; it said: %s\n", name, said);
	return ok ? 0 : -1;
}

/* Nothing set: every default of env_vars.def, nothing said. */
static void defaults(void)
{
	CHECK_EQ_INT(gp_rec_config_load(), 0);
	const struct gp_rec_config *c = gp_rec_config();
	CHECK(c->output == NULL && c->run_dir == NULL && c->root_pid == NULL && c->mode == NULL);
	CHECK_EQ_INT(c->rank, -1);
	CHECK_EQ_INT(c->world_size, -1);
	CHECK_EQ_INT(c->local_rank, -1);
	CHECK_EQ_INT(c->local_world_size, -1);
	CHECK_EQ_INT(c->has_job_start, 0);
	CHECK_EQ_INT(c->parts, GP_REC_ALL);
	CHECK_EQ_INT(c->patch, 1);
	CHECK_EQ_INT(c->host_events, GP_ENV_HOST_EVENTS_DEFAULT);
	CHECK_EQ_INT(c->buffer_bytes, GP_ENV_BUFFER_MB_DEFAULT << 20);
	CHECK_EQ_INT(c->flush, GP_CUPTI_FLUSH_DEFAULT);
	CHECK_EQ_INT(c->flush_ms, GP_ENV_FLUSH_MS_DEFAULT);
	CHECK_EQ_INT(c->cupti_flush_ms, GP_ENV_CUPTI_FLUSH_MS_DEFAULT);
	CHECK_EQ_INT(c->exit_wait_ms, GP_ENV_EXIT_WAIT_MS_DEFAULT);
	CHECK_EQ_INT(c->signal_wait_ms, GP_ENV_SIGNAL_WAIT_MS_DEFAULT);
	CHECK_EQ_INT(c->signals, 1);
	/* the defaults the README and the recorder have always had */
	CHECK_EQ_INT(c->flush_ms, 250);
	CHECK_EQ_INT(c->exit_wait_ms, 10000);
	CHECK_EQ_INT(c->buffer_bytes, 128u << 20);
}

/* Everything set: read as given, copied (a later change of the
 * environment changes nothing), the launchers' variables taken. */
static void set_all(void)
{
	setenv(GP_ENV_OUTPUT, "/tmp/x.json.gz", 1);
	setenv(GP_ENV_RUN_DIR, "", 1);
	setenv(GP_ENV_ROOT_PID, "", 1); /* set, empty: still written as it is */
	setenv(GP_ENV_JOB_START_UNIX_NS, "1764230400000000000", 1);
	setenv(GP_ENV_MODE, "native", 1);
	setenv(GP_ENV_RECORD, "kernels,oom", 1);
	setenv(GP_ENV_PATCH, "0", 1);
	setenv(GP_ENV_HOST_EVENTS, "2048", 1);
	setenv(GP_ENV_BUFFER_MB, "8", 1);
	setenv(GP_ENV_FLUSH, "forced", 1);
	setenv(GP_ENV_CUPTI_FLUSH_MS, "100", 1);
	setenv(GP_ENV_FLUSH_MS, "1000", 1);
	setenv(GP_ENV_EXIT_WAIT_MS, "0", 1);
	setenv(GP_ENV_SIGNAL_WAIT_MS, "600000", 1);
	setenv(GP_ENV_SIGNALS, "0", 1);
	setenv("SLURM_PROCID", "3", 1); /* no RANK: Slurm's */
	setenv("RANK", "x", 1);
	setenv("WORLD_SIZE", "8", 1);
	setenv("LOCAL_RANK", "1", 1);
	setenv("LOCAL_WORLD_SIZE", "4", 1);
	CHECK_EQ_INT(gp_rec_config_load(), 0);
	setenv(GP_ENV_OUTPUT, "/tmp/changed.json.gz", 1);
	setenv(GP_ENV_FLUSH_MS, "10", 1);
	CHECK_EQ_INT(gp_rec_config_load(), 0); /* once: not read again */
	const struct gp_rec_config *c = gp_rec_config();
	CHECK(c->output && strcmp(c->output, "/tmp/x.json.gz") == 0);
	CHECK(c->run_dir && !*c->run_dir);
	CHECK(c->root_pid && !*c->root_pid);
	CHECK_EQ_INT(c->has_job_start, 1);
	CHECK_EQ_U64(c->job_start_unix_ns, 1764230400000000000ull);
	CHECK(c->mode && strcmp(c->mode, "native") == 0);
	CHECK_EQ_INT(c->parts, GP_REC_KERNELS | GP_REC_OOM);
	CHECK_EQ_INT(c->patch, 0);
	CHECK_EQ_INT(c->host_events, 2048);
	CHECK_EQ_INT(c->buffer_bytes, 8u << 20);
	CHECK_EQ_INT(c->flush, GP_CUPTI_FLUSH_FORCED);
	CHECK_EQ_INT(c->cupti_flush_ms, 100);
	CHECK_EQ_INT(c->flush_ms, 1000);
	CHECK_EQ_INT(c->exit_wait_ms, 0);
	CHECK_EQ_INT(c->signal_wait_ms, 600000);
	CHECK_EQ_INT(c->signals, 0);
	CHECK_EQ_INT(c->rank, 3);
	CHECK_EQ_INT(c->world_size, 8);
	CHECK_EQ_INT(c->local_rank, 1);
	CHECK_EQ_INT(c->local_world_size, 4);
}

/* Out of bounds, not numbers, unknown parts: the default, said once each,
 * in the order the recorder always said them. */
static void wrong(void)
{
	setenv(GP_ENV_RECORD, "kernels,gpus", 1);
	setenv(GP_ENV_BUFFER_MB, "7", 1);
	setenv(GP_ENV_FLUSH_MS, "fast", 1);
	setenv(GP_ENV_SIGNALS, "2", 1);
	setenv(GP_ENV_FLUSH, "sometimes", 1);
	setenv(GP_ENV_PATCH, "no", 1);
	CHECK_EQ_INT(gp_rec_config_load(), 0);
	const struct gp_rec_config *c = gp_rec_config();
	CHECK_EQ_INT(c->parts, GP_REC_KERNELS);
	CHECK_EQ_INT(c->buffer_bytes, GP_ENV_BUFFER_MB_DEFAULT << 20);
	CHECK_EQ_INT(c->flush_ms, GP_ENV_FLUSH_MS_DEFAULT);
	CHECK_EQ_INT(c->signals, 1);
	CHECK_EQ_INT(c->flush, GP_CUPTI_FLUSH_DEFAULT);
	CHECK_EQ_INT(c->patch, 1); /* only 0 turns the patching off */
	CHECK_EQ_INT(gp_rec_config_load(), 0);
}

/* Tensor mode leaves pools out of the default parts, not of a list given. */
static void tensor(void)
{
	setenv(GP_ENV_MODE, "tensor", 1);
	CHECK_EQ_INT(gp_rec_config_load(), 0);
	CHECK_EQ_INT(gp_rec_config()->parts, GP_REC_ALL & ~GP_REC_POOLS);
}

static void tensor_all(void)
{
	setenv(GP_ENV_MODE, "tensor", 1);
	setenv(GP_ENV_RECORD, "all", 1);
	CHECK_EQ_INT(gp_rec_config_load(), 0);
	CHECK_EQ_INT(gp_rec_config()->parts, GP_REC_ALL);
}

int main(void)
{
	char names[160];

	CHECK_EQ_INT(run_case("defaults", defaults), 0);
	CHECK(strcmp(said, "") == 0);
	CHECK_EQ_INT(run_case("set_all", set_all), 0);
	CHECK(strcmp(said, "") == 0);
	CHECK_EQ_INT(run_case("wrong", wrong), 0);
	CHECK(strcmp(said,
		     "gpuprof: GPUPROF_RECORD: unknown part 'gpus' ignored (kernels, copies, api, "
		     "launches, oom, nvtx, pools, statics, memory, all)\n"
		     "gpuprof: ignoring GPUPROF_BUFFER_MB=7 (expected 8..65536)\n"
		     "gpuprof: ignoring GPUPROF_FLUSH_MS=fast (expected 10..1000)\n"
		     "gpuprof: ignoring GPUPROF_SIGNALS=2 (expected 0..1)\n") == 0);
	CHECK_EQ_INT(run_case("tensor", tensor), 0);
	CHECK_EQ_INT(run_case("tensor_all", tensor_all), 0);

	/* the names gpuprof.meta's record field is written with */
	gp_rec_parts_names(GP_REC_ALL | GP_REC_MEMORY, names, sizeof(names));
	CHECK(strcmp(names, "kernels,copies,api,launches,oom,nvtx,pools,statics,memory") == 0);
	gp_rec_parts_names(0, names, sizeof(names));
	CHECK(strcmp(names, "none") == 0);
	CHECK_EQ_INT(gp_rec_parts_parse("test", "api,,launches"), GP_REC_API | GP_REC_LAUNCHES);
	return CHECK_DONE();
}
