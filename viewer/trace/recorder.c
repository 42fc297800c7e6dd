/* The recorder of `gpuprof --trace`: the injected library found (beside
 * gpuprof as installed, in the build tree, or GPUPROF_INJECT_LIB),
 * test-loaded in a throwaway process, and named to CUDA and NVTX through
 * their injection variables. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "exporters/env_vars.h"
#include "viewer/cli.h"

/* Both come from viewer/CMakeLists.txt; empty when the recorder is not built. */
#ifndef GPUPROF_BUILD_INJECT_PATH
#define GPUPROF_BUILD_INJECT_PATH ""
#endif
#ifndef GPUPROF_INSTALL_INJECT_REL
#define GPUPROF_INSTALL_INJECT_REL "../lib/gpuprof/libgpuprof_inject.so"
#endif

/* What loading the libraries in a throwaway process found. */
struct probe {
	bool recorder_loads;
	bool driver_loads;
	char why[512]; /* dlerror() for the recorder */
};

static int library_file(const char *path, char **out)
{
	struct stat st;
	char *real = realpath(path, NULL);
	int err = 0;

	if (!real)
		return -errno;
	if (stat(real, &st) != 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	if (err) {
		free(real);
		return err;
	}
	*out = real;
	return 0;
}

/* CUDA ignores a CUDA_INJECTION64_PATH that names no loadable file without a
 * word, so the library is looked for here and its absence reported. */
static int find_recorder(char **out)
{
	const char *env = getenv(GP_ENV_INJECT_LIB), *built = GPUPROF_BUILD_INJECT_PATH;
	char *exe = NULL, *installed = NULL, *slash;
	int err;

	if (env && *env) {
		/* an explicit choice: falling back would record with another build */
		err = library_file(env, out);
		if (err)
			gp_msg("recorder library not found: %s=%s: %s", GP_ENV_INJECT_LIB, env,
			       strerror(-err));
		return err;
	}
	exe = realpath("/proc/self/exe", NULL);
	slash = exe ? strrchr(exe, '/') : NULL;
	if (slash) {
		*slash = '\0';
		if (asprintf(&installed, "%s/%s", exe, GPUPROF_INSTALL_INJECT_REL) < 0)
			installed = NULL;
	}
	err = -ENOENT;
	if (installed && library_file(installed, out) == 0)
		err = 0;
	else if (*built && library_file(built, out) == 0)
		err = 0;
	if (err)
		gp_msg("recorder library not found (looked for %s%s%s); set %s",
		       installed ? installed : "it beside gpuprof", *built ? " and " : "", built,
		       GP_ENV_INJECT_LIB);
	free(installed);
	free(exe);
	return err;
}

/* dlopen() runs the constructors of the recorder, of libcupti and of the
 * driver. Doing it in a throwaway child keeps their side effects (threads,
 * driver state, a crash) out of the launcher that is about to fork PROGRAM. */
static int probe_libraries(const char *recorder, struct probe *p)
{
	int fds[2], wstatus = 0, err = 0;
	ssize_t n = 0;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (pid == 0) {
		struct probe res = { 0 };
		int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		void *h;

		/* a chatty constructor must not write into PROGRAM's stdout */
		if (devnull >= 0)
			dup2(devnull, STDOUT_FILENO);
		h = dlopen(recorder, RTLD_LAZY | RTLD_LOCAL);
		res.recorder_loads = h != NULL;
		if (h) {
			dlclose(h);
		} else {
			const char *why = dlerror();

			snprintf(res.why, sizeof(res.why), "%s", why ? why : "unknown error");
		}
		h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
		res.driver_loads = h != NULL;
		/* one write below PIPE_BUF: atomic */
		n = write(fds[1], &res, sizeof(res));
		_exit(n == (ssize_t)sizeof(res) ? 0 : 1);
	}
	close(fds[1]);
	fds[1] = -1;
	do
		n = read(fds[0], p, sizeof(*p));
	while (n < 0 && errno == EINTR);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(*p)) {
		memset(p, 0, sizeof(*p));
		if (WIFSIGNALED(wstatus))
			snprintf(p->why, sizeof(p->why), "loading it killed a test process (signal %d)",
				 WTERMSIG(wstatus));
		else
			snprintf(p->why, sizeof(p->why), "the loading test failed");
		/* the driver was not reached: do not claim it is missing */
		p->driver_loads = true;
	}
	p->why[sizeof(p->why) - 1] = '\0';
cleanup:
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return err;
}

/* output: the trace's file, or NULL with run_dir: a run directory. */
static int export_recorder_env(const char *lib, const char *output, const char *run_dir)
{
	static const char *const hooks[] = { "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH" };
	size_t i;

	for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		const char *old = getenv(hooks[i]);

		/* one injection slot per process: the other tool loses it */
		if (old && *old && strcmp(old, lib) != 0)
			gp_msg("replacing %s=%s (another tool?)", hooks[i], old);
		if (setenv(hooks[i], lib, 1) != 0)
			return -errno;
	}
	if (run_dir)
		return setenv(GP_ENV_RUN_DIR, run_dir, 1) || unsetenv(GP_ENV_OUTPUT) ? -errno : 0;
	/* an outer gpuprof's run directory is not this run's */
	if (setenv(GP_ENV_OUTPUT, output, 1) != 0 || unsetenv(GP_ENV_RUN_DIR) != 0)
		return -errno;
	return 0;
}

/* Decides whether this run records. Never stops the run: a program worth
 * profiling is usually worth running, and every reason is printed. */
int gp_trace_setup_recorder(struct gp_trace_run *r)
{
	struct probe p = { 0 };
	char *lib = NULL;
	int err;

	if (find_recorder(&lib) != 0)
		goto no_recording;
	err = probe_libraries(lib, &p);
	if (err) {
		gp_msg("cannot check the recorder %s: %s", lib, strerror(-err));
		goto no_recording;
	}
	if (!p.recorder_loads)
		gp_msg("cannot load the recorder %s: %s", lib, p.why);
	/* Only a warning: the recorder is still set up, in case PROGRAM (a wrapper
	 * script) changes LD_LIBRARY_PATH before the CUDA process starts. */
	if (!p.driver_loads)
		gp_msg("no NVIDIA driver (libcuda.so.1 not found): nothing will be recorded");
	if (!p.recorder_loads)
		goto no_recording;
	err = export_recorder_env(lib, r->output, r->run_dir);
	if (err) {
		gp_msg("cannot set the environment: %s", strerror(-err));
		free(lib);
		return err;
	}
	r->recorder = lib;
	return 0;

no_recording:
	free(lib);
	gp_msg("running %s without recording", r->name);
	return 0;
}
