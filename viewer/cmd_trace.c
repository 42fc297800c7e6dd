/* gpuprof --trace: runs PROGRAM with the recorder injected through CUDA's own
 * hook (CUDA_INJECTION64_PATH, read by the driver when the program first uses
 * CUDA), then makes sure every trace the run left is complete and says where
 * it is.
 *
 * The launcher stays out of the program's way: it execs PROGRAM as given,
 * leaves stdin/stdout/stderr to it, writes only "gpuprof: " lines on stderr,
 * and exits with the program's status. Anything that prevents recording (no
 * driver, a recorder that cannot load) is reported and the program runs
 * anyway; only bad usage stops it from running. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "torch_env.h"
#include "exporters/trace_names.h"
#include "exporters/trace_recover.h"

/* Both come from viewer/CMakeLists.txt; empty when the recorder is not built. */
#ifndef GPUPROF_BUILD_INJECT_PATH
#define GPUPROF_BUILD_INJECT_PATH ""
#endif
#ifndef GPUPROF_INSTALL_INJECT_REL
#define GPUPROF_INSTALL_INJECT_REL "../lib/gpuprof/libgpuprof_inject.so"
#endif

struct trace_settings {
	const char *output; /* -o as given; NULL: named after PROGRAM */
	bool force;
	const char *python; /* NULL: $GPUPROF_PYTHON, else python3 */
	enum gp_mode mode;  /* AUTO: tensor for Python programs, else cuda */
	bool ops;           /* --ops: PyTorch op ranges too */
	bool history;       /* --torch-history: PyTorch's allocator history (native) */
	char **program;     /* PROGRAM ARGS..., NULL-terminated, inside argv */
};

/* What one run works out before it starts the program. */
struct run {
	const char *name;       /* PROGRAM as typed, for messages */
	char *output;           /* absolute */
	bool replace_output;    /* --force and something is there */
	char *recorder;         /* absolute; NULL: not recording */
	char **exec_argv;       /* settings' program, or py_argv */
	char **py_argv;         /* PYTHON PROGRAM.py ARGS... */
	struct timespec start;  /* traces older than this are not ours */
};

struct probe {
	bool recorder_loads;
	bool driver_loads;
	char why[512]; /* dlerror() for the recorder */
};

struct trace_file {
	char *path;
	pid_t pid;    /* 0 for the root process's trace */
	bool running; /* its process still runs: not checked */
	off_t size;
};

enum { OPT_PYTHON = 0x100, OPT_MODE, OPT_OPS, OPT_HISTORY };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "ops", no_argument, NULL, OPT_OPS },
	{ "torch-history", no_argument, NULL, OPT_HISTORY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Set while PROGRAM runs, for the forwarding handler. A pid fits an int,
 * which is what sig_atomic_t is on Linux. */
static volatile sig_atomic_t child_pid;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_python_script(const char *program)
{
	return strlen(program) > 3 && ends_with(program, ".py");
}

/* gpuprof-<PROGRAM's base name, without .py>-<local time>.json.gz */
static int default_output(const char *program, char **out)
{
	const char *base = strrchr(program, '/');
	char name[65], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t len, i;

	base = base ? base + 1 : program;
	len = strlen(base);
	if (is_python_script(base))
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
	if (asprintf(out, "gpuprof-%s-%s" GP_TRACE_SUFFIX, len ? name : "program", stamp) < 0)
		return -ENOMEM;
	return 0;
}

/* Makes the output path absolute (the program may chdir before it uses CUDA)
 * and refuses what would make the recorder fail late, after a long run, or
 * write where it should not: a missing or read-only directory, an existing
 * file, a symbolic link. */
static int resolve_output(const struct trace_settings *s, struct run *r)
{
	char *made = NULL, *dir = NULL, *real_dir = NULL;
	const char *path = s->output, *slash, *base;
	struct stat st;
	int err = 0;

	if (!path) {
		err = default_output(s->program[0], &made);
		if (err) {
			gp_msg("cannot name the trace: %s", strerror(-err));
			goto cleanup;
		}
		path = made;
	}
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		gp_msg("-o %s: give a file name, not a directory", path);
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
		if (S_ISDIR(st.st_mode)) {
			gp_msg("%s is a directory; give a file name with -o", r->output);
			err = -EISDIR;
		} else if (S_ISLNK(st.st_mode) && !s->force) {
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
	}
	free(real_dir);
	free(dir);
	free(made);
	return err;
}

static int check_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES; /* what execve() says of a directory */
	return access(path, X_OK) == 0 ? 0 : -errno;
}

/* What execvp() will find, checked before forking so that a typo gets a
 * clear message and no half-started run. The child still reports an exec
 * failure (see run_program), this only covers the usual cases. */
static int find_executable(const char *name)
{
	const char *dirs = getenv("PATH"), *p, *end;
	char buf[4096];
	int err = -ENOENT, e;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/'))
		return check_executable(name);
	if (!dirs)
		dirs = "/bin:/usr/bin"; /* glibc's execvp() default */
	for (p = dirs;; p = end + 1) {
		int n;

		end = strchrnul(p, ':');
		/* an empty entry means the current directory */
		n = end == p ? snprintf(buf, sizeof(buf), "%s", name)
			     : snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, name);
		if (n > 0 && (size_t)n < sizeof(buf)) {
			e = check_executable(buf);
			if (e == 0)
				return 0;
			/* like execvp(): "permission denied" wins over "not found" */
			if (e == -EACCES)
				err = e;
		}
		if (!*end)
			break;
	}
	return err;
}

static int resolve_program(const struct trace_settings *s, struct run *r)
{
	const char *program = s->program[0], *python;
	size_t n;
	int err;

	if (!is_python_script(program)) {
		err = find_executable(program);
		if (err)
			gp_msg("cannot run '%s': %s", program, strerror(-err));
		r->exec_argv = s->program;
		return err;
	}
	python = s->python ? s->python : getenv("GPUPROF_PYTHON");
	if (!python || !*python)
		python = "python3";
	if (access(program, R_OK) != 0) {
		err = -errno;
		gp_msg("cannot run '%s': %s", program, strerror(-err));
		return err;
	}
	err = find_executable(python);
	if (err) {
		gp_msg("cannot run '%s': %s", python, strerror(-err));
		gp_msg("choose the Python interpreter with --python or GPUPROF_PYTHON");
		return err;
	}
	for (n = 0; s->program[n]; n++)
		;
	r->py_argv = calloc(n + 2, sizeof(*r->py_argv));
	if (!r->py_argv) {
		gp_msg("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r->py_argv[0] = (char *)python;
	memcpy(r->py_argv + 1, s->program, (n + 1) * sizeof(*r->py_argv));
	r->exec_argv = r->py_argv;
	return 0;
}

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
	const char *env = getenv("GPUPROF_INJECT_LIB"), *built = GPUPROF_BUILD_INJECT_PATH;
	char *exe = NULL, *installed = NULL, *slash;
	int err;

	if (env && *env) {
		/* an explicit choice: falling back would record with another build */
		err = library_file(env, out);
		if (err)
			gp_msg("recorder library not found: GPUPROF_INJECT_LIB=%s: %s", env,
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
		gp_msg("recorder library not found (looked for %s%s%s); set GPUPROF_INJECT_LIB",
		       installed ? installed : "it beside gpuprof", *built ? " and " : "", built);
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

static int export_recorder_env(const char *lib, const char *output)
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
	if (setenv("GPUPROF_OUTPUT", output, 1) != 0)
		return -errno;
	return 0;
}

/* Decides whether this run records. Never stops the run: a program worth
 * profiling is usually worth running, and every reason is printed. */
static int setup_recorder(struct run *r)
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
	err = export_recorder_env(lib, r->output);
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

/* Python programs are traced in tensor mode unless told otherwise: the
 * hooks next to the recorder name layers and phases (torch_env.h). */
static int setup_mode(const struct trace_settings *s, struct run *r)
{
	enum gp_mode mode = s->mode;
	char *dir = NULL, *slash;
	struct stat st;
	int err;

	if (mode == GP_MODE_AUTO)
		mode = gp_runs_python(s->program[0]) ? GP_MODE_TENSOR : GP_MODE_CUDA;
	if (s->ops && mode == GP_MODE_CUDA)
		gp_msg("--ops needs a PyTorch program (--mode tensor or native); ignored");
	if (s->history && mode != GP_MODE_NATIVE)
		gp_msg("--torch-history needs --mode native (tensor mode records every tensor "
		       "already); ignored");
	if (mode != GP_MODE_CUDA) {
		dir = malloc(strlen(r->recorder) + sizeof("/python"));
		if (!dir)
			return -ENOMEM;
		strcpy(dir, r->recorder);
		slash = strrchr(dir, '/');
		strcpy(slash ? slash : dir, "/python");
		if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
			gp_msg("the PyTorch hooks are missing (%s): layers and steps will not be "
			       "named", dir);
	}
	err = gp_torch_env_export(mode, s->ops, s->history && mode == GP_MODE_NATIVE, dir);
	if (err)
		gp_msg("cannot set the environment: %s", strerror(-err));
	else if (mode != GP_MODE_CUDA)
		gp_msg("%s mode: %s", gp_mode_name(mode),
		       mode == GP_MODE_TENSOR
			       ? "every tensor is recorded (PyTorch allocator backend cudaMallocAsync)"
			       : "PyTorch's own allocator, recorded as its segments");
	free(dir);
	return err;
}

static void forward_signal(int sig)
{
	int saved = errno;

	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	errno = saved;
}

struct saved_signals {
	struct sigaction intr, quit, term, hup, chld;
	sigset_t mask;
};

/* Like system(3): Ctrl-C and Ctrl-\ reach PROGRAM directly (same process
 * group), and the launcher must outlive it to finish the trace. SIGTERM and
 * SIGHUP sent to the launcher alone (kill, a job scheduler, a closed
 * terminal) are passed on so that PROGRAM ends as it would without gpuprof. */
static int take_signals(struct saved_signals *old)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct sigaction fwd = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };
	sigset_t block;

	sigemptyset(&ign.sa_mask);
	sigemptyset(&dfl.sa_mask);
	sigemptyset(&fwd.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	/* held until child_pid is set, so that none is lost around fork() */
	if (sigprocmask(SIG_BLOCK, &block, &old->mask) != 0)
		return -errno;
	sigaction(SIGINT, &ign, &old->intr);
	sigaction(SIGQUIT, &ign, &old->quit);
	sigaction(SIGTERM, NULL, &old->term);
	sigaction(SIGHUP, NULL, &old->hup);
	/* ignored on entry (nohup): stays ignored, and PROGRAM inherits that */
	if (old->term.sa_handler != SIG_IGN)
		sigaction(SIGTERM, &fwd, NULL);
	if (old->hup.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &fwd, NULL);
	/* an ignored SIGCHLD makes the kernel reap PROGRAM and hide its status */
	sigaction(SIGCHLD, &dfl, &old->chld);
	return 0;
}

static void restore_signals(const struct saved_signals *old)
{
	sigaction(SIGINT, &old->intr, NULL);
	sigaction(SIGQUIT, &old->quit, NULL);
	sigaction(SIGTERM, &old->term, NULL);
	sigaction(SIGHUP, &old->hup, NULL);
	sigaction(SIGCHLD, &old->chld, NULL);
	sigprocmask(SIG_SETMASK, &old->mask, NULL);
}

/* Forks and execs PROGRAM, waits for it. *wstatus gets its wait status.
 * Returns 0, -errno from the launcher, or the exec failure as a positive
 * errno (the message is printed here: the child cannot print it, since its
 * stderr is PROGRAM's). */
static int run_program(struct run *r, int *wstatus)
{
	struct saved_signals old;
	sigset_t block;
	int fds[2] = { -1, -1 }, exec_errno = 0, err = 0;
	siginfo_t info;
	ssize_t n;
	pid_t pid;

	/* The classic self-pipe: closed on a successful exec (CLOEXEC), carries
	 * errno when exec fails, so the launcher can tell "PROGRAM could not
	 * start" from "PROGRAM exited 127" without guessing. */
	if (pipe2(fds, O_CLOEXEC) != 0) {
		err = -errno;
		gp_msg("cannot start %s: %s", r->name, strerror(-err));
		return err;
	}
	err = take_signals(&old);
	if (err) {
		gp_msg("cannot start %s: %s", r->name, strerror(-err));
		goto cleanup;
	}
	clock_gettime(CLOCK_REALTIME_COARSE, &r->start);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		restore_signals(&old);
		gp_msg("cannot start %s: %s", r->name, strerror(-err));
		goto cleanup;
	}
	if (pid == 0) {
		char buf[24];

		close(fds[0]);
		restore_signals(&old);
		/* The recorder tells the root process from its children by this.
		 * setenv() after fork() is safe: the launcher has one thread. */
		if (r->recorder) {
			snprintf(buf, sizeof(buf), "%ld", (long)getpid());
			setenv("GPUPROF_ROOT_PID", buf, 1);
		}
		execvp(r->exec_argv[0], r->exec_argv);
		exec_errno = errno;
		n = write(fds[1], &exec_errno, sizeof(exec_errno));
		_exit(n == (ssize_t)sizeof(exec_errno) ? 127 : 126);
	}
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old.mask, NULL);
	close(fds[1]);
	fds[1] = -1;
	do
		n = read(fds[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(exec_errno))
		exec_errno = 0;

	/* Wait without reaping, then stop forwarding, then reap: the pid cannot
	 * be reused while the handler may still send it a signal. */
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR)
		;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, NULL);
	child_pid = 0;
	while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
		;
	/* a SIGTERM that came after PROGRAM ended now acts on the launcher */
	restore_signals(&old);
	if (exec_errno) {
		gp_msg("cannot run '%s': %s", r->exec_argv[0], strerror(exec_errno));
		err = exec_errno;
	}
cleanup:
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return err;
}

static const char *signal_abbrev(int sig)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	return sigabbrev_np(sig);
#else
	(void)sig;
	return NULL;
#endif
}

static int compare_traces(const void *a, const void *b)
{
	const struct trace_file *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static bool newer_or_same(const struct timespec *t, const struct timespec *since)
{
	return t->tv_sec > since->tv_sec ||
	       (t->tv_sec == since->tv_sec && t->tv_nsec >= since->tv_nsec);
}

static int add_trace(struct trace_file **files, size_t *count, char *path, pid_t pid)
{
	struct trace_file *grown = realloc(*files, (*count + 1) * sizeof(**files));

	if (!grown) {
		free(path);
		return -ENOMEM;
	}
	*files = grown;
	grown[*count] = (struct trace_file){ .path = path, .pid = pid };
	(*count)++;
	return 0;
}

/* The root trace and the traces of PROGRAM's children that used CUDA (see
 * gp_child_trace_path()). A child's file counts only if written during this
 * run: an older one with the same stem belongs to an earlier run. */
static int collect_traces(const struct run *r, struct trace_file **files, size_t *count)
{
	const char *slash = strrchr(r->output, '/'), *out_name = slash + 1;
	char *dir, *path;
	struct dirent *d;
	struct stat st;
	DIR *dp = NULL;
	int err = 0;
	pid_t pid;

	dir = strndup(r->output, slash == r->output ? 1 : (size_t)(slash - r->output));
	if (!dir)
		return -ENOMEM;
	if (lstat(r->output, &st) == 0 && S_ISREG(st.st_mode)) {
		path = strdup(r->output);
		err = path ? add_trace(files, count, path, 0) : -ENOMEM;
		if (err)
			goto cleanup;
	}
	dp = opendir(dir);
	if (!dp) {
		err = -errno;
		goto cleanup;
	}
	while ((errno = 0, d = readdir(dp)) != NULL) {
		pid = gp_child_trace_pid(out_name, d->d_name);
		if (pid <= 0)
			continue;
		if (fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || !newer_or_same(&st.st_mtim, &r->start))
			continue;
		if (asprintf(&path, "%s/%s", strcmp(dir, "/") ? dir : "", d->d_name) < 0) {
			err = -ENOMEM;
			goto cleanup;
		}
		err = add_trace(files, count, path, pid);
		if (err)
			goto cleanup;
	}
	if (errno)
		err = -errno;
	if (*count > 1)
		qsort(*files, *count, sizeof(**files), compare_traces);
cleanup:
	if (dp)
		closedir(dp);
	free(dir);
	return err;
}

static bool process_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* Every trace goes through recovery: it cheaply leaves a complete file alone
 * and repairs one cut short (PROGRAM killed, a child killed by its parent). */
static void repair_trace(struct trace_file *f, bool several)
{
	struct gp_recover_result res = { 0 };
	struct stat st;
	int err;

	err = gp_trace_recover_in_place(f->path, &res);
	if (err == -EINVAL)
		gp_msg("%s is not a readable gpuprof trace; left as it is", f->path);
	else if (err)
		gp_msg("cannot check %s: %s (try: gpuprof recover %s)", f->path,
		       strerror(-err), f->path);
	else if (!res.already_complete)
		gp_msg("trace cut short; recovered %" PRIu64 " events up to the last flush%s%s%s",
		       res.events_kept, several ? " (" : "", several ? f->path : "",
		       several ? ")" : "");
	if (lstat(f->path, &st) == 0)
		f->size = st.st_size;
}

/* Binary units, as the rest of gpuprof prints them: 512 B, 7.1 KiB, 3.3 MiB. */
static void human_size(char *buf, size_t cap, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
}

/* Where to look next: Perfetto, or `gpuprof analyze` with every trace no
 * longer being written (the processes of one run are analyzed together). */
static void print_open_hint(const struct trace_file *files, size_t count)
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

static void report_traces(const struct run *r)
{
	struct trace_file *files = NULL;
	size_t count = 0, i;
	int err;

	err = collect_traces(r, &files, &count);
	if (err) {
		gp_msg("cannot look for the traces beside %s: %s", r->output, strerror(-err));
		goto cleanup;
	}
	if (count == 0) {
		gp_msg("nothing was recorded: %s made no CUDA call, or the recorder could "
		       "not start (see the gpuprof: lines above)", r->name);
		goto cleanup;
	}
	for (i = 0; i < count; i++) {
		struct stat st;

		/* repairing a file still being written would lose what follows */
		files[i].running = files[i].pid > 0 && process_alive(files[i].pid);
		if (!files[i].running)
			repair_trace(&files[i], count > 1);
		else if (lstat(files[i].path, &st) == 0)
			files[i].size = st.st_size;
	}
	if (count > 1)
		gp_msg("%zu traces written, one per process that used CUDA:", count);
	for (i = 0; i < count; i++) {
		const struct trace_file *f = &files[i];
		char size[32];

		human_size(size, sizeof(size), (uint64_t)f->size);
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
	for (i = 0; i < count; i++)
		free(files[i].path);
	free(files);
}

static int trace_main(int argc, char **argv)
{
	struct trace_settings s = { 0 };
	struct run r = { 0 };
	int c, prev, err, wstatus = 0, status = GP_EXIT_USAGE;

	/* '+': options end at PROGRAM; what follows it is PROGRAM's, so
	 * `gpuprof --trace ./app -o x` passes -o x to app. */
	while ((prev = optind, c = getopt_long(argc, argv, "+:o:fh", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			s.output = optarg;
			break;
		case 'f':
			s.force = true;
			break;
		case OPT_PYTHON:
			s.python = optarg;
			break;
		case OPT_MODE:
			if (gp_mode_parse(optarg, &s.mode) != 0)
				return gp_usage_error("--mode must be tensor, native or cuda, not '%s'",
						      optarg);
			break;
		case OPT_OPS:
			s.ops = true;
			break;
		case OPT_HISTORY:
			s.history = true;
			break;
		case 'h':
			gp_print_help();
			return GP_EXIT_OK;
		default:
			return gp_option_error(c, argv[prev]);
		}
	}
	if (optind >= argc)
		return gp_usage_error("missing PROGRAM to run");
	if (s.output && !*s.output)
		return gp_usage_error("option '-o' needs a file name");
	if (s.python && !*s.python)
		return gp_usage_error("option '--python' needs a program");
	s.program = argv + optind;
	r.name = s.program[0];

	/* everything that can refuse the run comes before anything is changed */
	err = resolve_output(&s, &r);
	if (err)
		goto cleanup;
	err = resolve_program(&s, &r);
	if (err)
		goto cleanup;
	status = GP_EXIT_FAIL;
	err = setup_recorder(&r);
	if (err)
		goto cleanup;
	if (r.recorder) {
		err = setup_mode(&s, &r);
		if (err)
			goto cleanup;
	}
	/* unlink() removes a symbolic link itself, never its target; without a
	 * recorder the old trace stays, as nothing would replace it */
	if (r.recorder && r.replace_output && unlink(r.output) != 0 && errno != ENOENT) {
		err = -errno;
		gp_msg("cannot replace %s: %s", r.output, strerror(-err));
		goto cleanup;
	}

	err = run_program(&r, &wstatus);
	if (err) {
		status = err > 0 ? GP_EXIT_USAGE : GP_EXIT_FAIL;
		goto cleanup;
	}
	if (WIFSIGNALED(wstatus)) {
		int sig = WTERMSIG(wstatus);
		const char *abbrev = signal_abbrev(sig);

		if (abbrev)
			gp_msg("%s was killed by signal %d (SIG%s)", r.name, sig, abbrev);
		else
			gp_msg("%s was killed by signal %d", r.name, sig);
		status = 128 + sig;
	} else {
		status = WEXITSTATUS(wstatus);
	}
	if (r.recorder)
		report_traces(&r);
cleanup:
	free(r.py_argv);
	free(r.recorder);
	free(r.output);
	return status;
}

const struct gp_command gp_cmd_trace = {
	.name = "trace",
	.summary = "run PROGRAM and record its GPU memory activity to a trace",
	.usage = "  gpuprof --trace [-o PATH] [--force] [--mode MODE] [--ops] [--torch-history]\n"
		 "                 [--python PYTHON] [--] PROGRAM [ARGS...]\n",
	.options =
		"  trace (options go before PROGRAM; what follows PROGRAM is passed to it):\n"
		"  -o, --output PATH      write the trace to PATH (default: in the current\n"
		"                         directory, gpuprof-PROGRAM-YYYYmmdd-HHMMSS.json.gz);\n"
		"                         a child process that uses CUDA writes STEM.PID.json.gz\n"
		"                         for a PATH of STEM.json.gz\n"
		"  -f, --force            replace PATH if it exists (a symbolic link is\n"
		"                         replaced itself; what it points to is left alone)\n"
		"      --mode MODE        tensor: every PyTorch tensor allocation (PyTorch's\n"
		"                         allocator switched to cudaMallocAsync; the default\n"
		"                         for Python programs); native: the program's own\n"
		"                         allocator, as its segments; cuda: no Python hooks\n"
		"                         (the default for other programs)\n"
		"      --ops              also record PyTorch ops (aten::...) as ranges\n"
		"      --torch-history    native mode: also PyTorch's allocated bytes after every\n"
		"                         allocation and free (its allocator's own history,\n"
		"                         written at exit), not only sampled, so fragmentation\n"
		"                         and the allocated peak are exact\n"
		"      --python PYTHON    run PROGRAM.py with PYTHON (default: $GPUPROF_PYTHON,\n"
		"                         else python3)\n"
		"      --                 end of gpuprof's options\n",
	.examples =
		"  gpuprof --trace train.py --epochs 1\n"
		"      run python3 train.py --epochs 1 and record it\n"
		"  gpuprof --trace -o run.json.gz -- ./app --flag\n"
		"      record ./app --flag to run.json.gz\n"
		"  gpuprof --trace --mode native --torch-history train.py\n"
		"      PyTorch's own allocator, its allocated bytes exact on the timeline\n"
		"  gpuprof --trace -- torchrun --nproc-per-node 1 train.py\n"
		"      record every process that uses CUDA, one trace each\n",
	.run = trace_main,
};
