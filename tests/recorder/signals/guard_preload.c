/* profiler/signals.c on its own, preloaded into a test program: its hook
 * writes "hook SIG ENDS" (and " child" in a fork()ed child) to $GP_SIGTEST_LOG (async-signal-safe: open and
 * write) and sleeps $GP_SIGTEST_HOOK_MS, as the recorder waits for its
 * writer. Started by a constructor, as the recorder starts in cuInit: after
 * the program's loader, before the program's own code. */
#include "signals.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_path;
static long hook_ms;
static pid_t started_in;

static void hook(int sig, int ends)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "hook %d %d%s\n", sig, ends,
			 getpid() == started_in ? "" : " child");
	int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		ssize_t w = write(fd, line, (size_t)n);
		(void)w;
		close(fd);
	}
	if (hook_ms > 0) {
		struct timespec t = { hook_ms / 1000, (hook_ms % 1000) * 1000000L };
		nanosleep(&t, NULL);
	}
}

__attribute__((constructor)) static void start(void)
{
	log_path = getenv("GP_SIGTEST_LOG");
	const char *ms = getenv("GP_SIGTEST_HOOK_MS");
	hook_ms = ms ? atol(ms) : 0;
	started_in = getpid();
	if (log_path && *log_path)
		gp_sig_start(hook);
}
