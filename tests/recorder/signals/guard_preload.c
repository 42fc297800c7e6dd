/* profiler/signals.c on its own, preloaded into a test program: its hook
 * writes "hook SIG ENDS" (and " child" in a fork()ed child) to
 * $GP_SIGTEST_LOG (async-signal-safe: open and write) and sleeps
 * $GP_SIGTEST_HOOK_MS, as the recorder waits for its writer. With
 * $GP_SIGTEST_WORKER set, the hook instead hands its work to a thread that
 * needs a lock the program may hold (gp_sigtest_hold, found by the program
 * with dlsym), as the recorder's writer needs CUPTI's and malloc's, and
 * waits for it at most 2 s: "worker done" or "worker timeout". Started by a
 * constructor, as the recorder starts in cuInit: after the program's
 * loader, before the program's own code. */
#include "signals.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_path;
static long hook_ms;
static pid_t started_in;
static int with_worker;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int work_asked, work_done;

static void say(const char *line, size_t n)
{
	int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		ssize_t w = write(fd, line, n);
		(void)w;
		close(fd);
	}
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
}

/* The program's lock, taken and released by the program. */
__attribute__((visibility("default"))) void gp_sigtest_hold(int on)
{
	if (on)
		pthread_mutex_lock(&held);
	else
		pthread_mutex_unlock(&held);
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&work_asked))
		sleep_ms(1);
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	atomic_store(&work_done, 1);
	return NULL;
}

static void hook(int sig, int ends)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "hook %d %d%s\n", sig, ends,
			 getpid() == started_in ? "" : " child");
	say(line, (size_t)n);
	if (with_worker) {
		atomic_store(&work_asked, 1);
		for (int waited = 0; waited < 2000 && !atomic_load(&work_done); waited++)
			sleep_ms(1);
		if (atomic_load(&work_done))
			say("worker done\n", 12);
		else
			say("worker timeout\n", 15);
	}
	if (hook_ms > 0)
		sleep_ms(hook_ms);
}

__attribute__((constructor)) static void start(void)
{
	log_path = getenv("GP_SIGTEST_LOG");
	const char *ms = getenv("GP_SIGTEST_HOOK_MS");
	hook_ms = ms ? atol(ms) : 0;
	started_in = getpid();
	const char *w = getenv("GP_SIGTEST_WORKER");
	if (w && *w) {
		pthread_t t;
		with_worker = pthread_create(&t, NULL, worker, NULL) == 0;
	}
	if (log_path && *log_path)
		gp_sig_start(hook);
}
