/* Running PROGRAM under `gpuprof --trace`: the launcher forks and execs it,
 * passes on the signals meant for it, outlives it to finish the traces, and
 * exits as PROGRAM did. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "exporters/env_vars.h"
#include "exporters/flight_sync.h"
#include "viewer/cli.h"

/* Set while PROGRAM runs, for the forwarding handler. A pid fits an int,
 * which is what sig_atomic_t is on Linux. */
static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	int saved = errno;

	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	errno = saved;
}

/* --window: SIGUSR1 asks the flight recorders for a dump. One process: it
 * is passed on. A run directory: the launcher, woken from its wait, asks
 * every recorder there for the same step (flight_sync.h). */
static volatile sig_atomic_t usr1_asked;
static const char *flight_run_dir;
static bool flight_on;

static void on_usr1(int sig)
{
	if (flight_run_dir)
		usr1_asked = 1;
	else
		forward_signal(sig);
}

/* The step every recorder of the run directory can still reach, asked for
 * in RUN/.flight/request, then SIGUSR1 to each. */
static void dump_run(const char *run_dir)
{
	char dir[4096], text[128];
	pid_t pids[4096];
	size_t npids = 0;
	uint64_t target = 0;
	struct timespec now;
	struct dirent *e;
	DIR *d;
	int n;

	if (gp_flight_sync_path(dir, sizeof(dir), run_dir, NULL) || !(d = opendir(dir))) {
		gp_msg("SIGUSR1: no flight recorder has written to %s yet", run_dir);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d)) && npids < sizeof(pids) / sizeof(pids[0])) {
		unsigned long long step;
		long long written, step_ns;
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		double ahead = 0;

		if (pid <= 0 || strcmp(end, GP_FLIGHT_SYNC_STEP_SUFFIX) != 0 ||
		    gp_flight_sync_get(run_dir, e->d_name, text, sizeof(text)) ||
		    sscanf(text, "%llu %lld %lld", &step, &written, &step_ns) != 3 || kill((pid_t)pid, 0) != 0)
			continue;
		/* where it may be when the signal comes: on at its pace */
		if (step_ns > 0)
			ahead = ((double)(gp_trace_unix_ns(&now) - written) + GP_FLIGHT_SYNC_AHEAD_MS * 1e6) /
				(double)step_ns;
		if (ahead < 0)
			ahead = 0;
		if (step + (uint64_t)ahead + GP_FLIGHT_SYNC_MARGIN > target)
			target = step + (uint64_t)ahead + GP_FLIGHT_SYNC_MARGIN;
		pids[npids++] = (pid_t)pid;
	}
	closedir(d);
	if (!npids) {
		gp_msg("SIGUSR1: no flight recorder running in %s", run_dir);
		return;
	}
	n = snprintf(text, sizeof(text), "%lld %llu\n", (long long)gp_trace_unix_ns(&now), (unsigned long long)target);
	if (gp_flight_sync_put(run_dir, GP_FLIGHT_SYNC_REQUEST, text, (size_t)n) != 0) {
		gp_msg("SIGUSR1: cannot write %s/%s/%s", run_dir, GP_FLIGHT_SYNC_DIR, GP_FLIGHT_SYNC_REQUEST);
		return;
	}
	for (size_t i = 0; i < npids; i++)
		kill(pids[i], SIGUSR1);
	gp_msg("SIGUSR1: %zu processes dump at step %llu", npids, (unsigned long long)target);
}

/* RUN/.flight/ once PROGRAM has ended: its files served the run only. */
static void clear_sync(const char *run_dir)
{
	char dir[4096], path[4400];
	struct dirent *e;
	DIR *d;

	if (gp_flight_sync_path(dir, sizeof(dir), run_dir, NULL) || !(d = opendir(dir)))
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	closedir(d);
	rmdir(dir);
}

struct saved_signals {
	struct sigaction intr, quit, term, hup, chld, usr1;
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
	sigaction(SIGUSR1, NULL, &old->usr1);
	if (flight_on) {
		/* no SA_RESTART: the launcher's wait returns to act on it */
		struct sigaction usr1 = { .sa_handler = on_usr1 };

		sigemptyset(&usr1.sa_mask);
		sigaction(SIGUSR1, &usr1, NULL);
	}
	return 0;
}

static void restore_signals(const struct saved_signals *old)
{
	sigaction(SIGINT, &old->intr, NULL);
	sigaction(SIGQUIT, &old->quit, NULL);
	sigaction(SIGTERM, &old->term, NULL);
	sigaction(SIGHUP, &old->hup, NULL);
	sigaction(SIGCHLD, &old->chld, NULL);
	sigaction(SIGUSR1, &old->usr1, NULL);
	sigprocmask(SIG_SETMASK, &old->mask, NULL);
}

/* Forks and execs PROGRAM, waits for it. *wstatus gets its wait status.
 * Returns 0, -errno from the launcher, or the exec failure as a positive
 * errno (the message is printed here: the child cannot print it, since its
 * stderr is PROGRAM's). */
int gp_trace_run_program(struct gp_trace_run *r, int *wstatus)
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
	flight_on = r->recorder && r->flight;
	flight_run_dir = flight_on ? r->run_dir : NULL;
	err = take_signals(&old);
	if (err) {
		gp_msg("cannot start %s: %s", r->name, strerror(-err));
		goto cleanup;
	}
	clock_gettime(CLOCK_REALTIME_COARSE, &r->start);
	struct timespec now;
	char job_start[24];
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(job_start, sizeof(job_start), "%lld", (long long)gp_trace_unix_ns(&now));
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
			setenv(GP_ENV_ROOT_PID, buf, 1);
			/* the job's start, the same in every process it traces; an
			 * outer launcher's (gpuprof inside gpuprof) is kept */
			setenv(GP_ENV_JOB_START_UNIX_NS, job_start, 0);
		}
		execvp(r->exec_argv[0], r->exec_argv);
		exec_errno = errno;
		n = write(fds[1], &exec_errno, sizeof(exec_errno));
		_exit(n == (ssize_t)sizeof(exec_errno) ? 127 : 126);
	}
	child_pid = pid;
	r->child = pid;
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
	if (usr1_asked) {
		usr1_asked = 0;
		dump_run(flight_run_dir);
	}
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
		if (usr1_asked) {
			usr1_asked = 0;
			dump_run(flight_run_dir);
		}
	}
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, NULL);
	child_pid = 0;
	while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
		;
	/* a SIGTERM that came after PROGRAM ended now acts on the launcher */
	restore_signals(&old);
	if (flight_run_dir)
		clear_sync(flight_run_dir);
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

int gp_trace_exit_status(const struct gp_trace_run *r, int wstatus)
{
	int sig;
	const char *abbrev;

	if (!WIFSIGNALED(wstatus))
		return WEXITSTATUS(wstatus);
	sig = WTERMSIG(wstatus);
	abbrev = signal_abbrev(sig);
	if (abbrev)
		gp_msg("%s was killed by signal %d (SIG%s)", r->name, sig, abbrev);
	else
		gp_msg("%s was killed by signal %d", r->name, sig);
	return 128 + sig;
}
