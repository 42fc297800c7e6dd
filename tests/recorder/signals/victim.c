/* What a program does with the signals gpuprof watches, one case per
 * argument; the test runs each with and without signals.c preloaded and
 * compares how it ends. Prints what it saw on stdout. */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void count(int sig)
{
	(void)sig;
	got++;
}

static void info_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got = si && si->si_signo == sig ? 100 : -1;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void spin(double seconds)
{
	double end = now_s() + seconds;
	while (now_s() < end)
		;
}

/* One write: gcc makes printf("ready\n") a puts(), which on an unbuffered
 * stdout writes "ready" and "\n" apart, and a signal sent on "ready" may
 * land between them. */
static void say_ready(void)
{
	static const char line[] = "ready\n";
	if (write(1, line, sizeof line - 1) < 0)
		exit(3);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(c, "segv") == 0) {
		volatile int *p = NULL;
		*p = 1;
	} else if (strcmp(c, "fpe") == 0) {
		volatile int zero = 0, x = 7;
		printf("%d\n", x / zero);
	} else if (strcmp(c, "bus") == 0) {
		char path[] = "/tmp/gp_sigbus_XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		volatile char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		m[0] = 1; /* past the end of an empty file */
	} else if (strcmp(c, "abort") == 0) {
		abort();
	} else if (strncmp(c, "kill-", 5) == 0) {
		/* sent from outside: to itself, as another process would */
		kill(getpid(), atoi(c + 5));
		pause();
	} else if (strcmp(c, "hold") == 0) {
		/* holds a lock nearly all the time, as a program's thread is
		 * inside CUPTI or malloc, until a signal from outside ends it */
		void (*hold)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "gp_sigtest_hold");
		say_ready();
		for (;;) {
			if (hold)
				hold(1);
			spin(0.02);
			if (hold)
				hold(0);
			usleep(200);
		}
	} else if (strcmp(c, "exit-soon") == 0) {
		/* exits 0.5 s after saying it is ready, unless a signal ends it */
		say_ready();
		spin(0.5);
		exit(0);
	} else if (strcmp(c, "query") == 0) {
		/* what it asks is what it sees: the default first, then its own */
		struct sigaction old, act;
		sigaction(SIGTERM, NULL, &old);
		printf("initial %s\n", old.sa_handler == SIG_DFL ? "default" : "other");
		memset(&act, 0, sizeof(act));
		act.sa_sigaction = info_handler;
		act.sa_flags = SA_SIGINFO;
		sigaction(SIGTERM, &act, NULL);
		sigaction(SIGTERM, NULL, &old);
		printf("set %s\n", old.sa_sigaction == info_handler && (old.sa_flags & SA_SIGINFO) ?
				   "own" : "other");
		raise(SIGTERM);
		printf("handled %d\n", (int)got);
		void (*prev)(int) = signal(SIGTERM, SIG_DFL);
		printf("signal() returned %s\n", (void *)prev == (void *)info_handler ? "own" : "other");
		raise(SIGTERM);
		printf("not reached\n");
	} else if (strcmp(c, "handle") == 0) {
		signal(SIGHUP, count);
		raise(SIGHUP);
		raise(SIGHUP);
		printf("handled %d\n", (int)got);
	} else if (strcmp(c, "oneshot") == 0) {
		/* System V semantics: reset to the default as it is delivered */
		sysv_signal(SIGQUIT, count);
		raise(SIGQUIT);
		printf("handled %d\n", (int)got);
		raise(SIGQUIT);
		printf("not reached\n");
	} else if (strcmp(c, "ignore") == 0) {
		signal(SIGINT, SIG_IGN);
		raise(SIGINT);
		kill(getpid(), SIGINT);
		printf("ignored\n");
	} else if (strcmp(c, "fork") == 0) {
		/* a child that dies of the signal: the hook is not for it */
		pid_t pid = fork();
		if (pid == 0) {
			raise(SIGTERM);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		printf("child %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	} else {
		fprintf(stderr, "unknown case %s\n", c);
		return 2;
	}
	return 0;
}
