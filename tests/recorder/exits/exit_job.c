/* A job of six steps (job_steps.c) that ends as its argument says, for
 * test_exits.py:
 *
 *   exit    returns from main (exit: the recorder's atexit handler)
 *   _exit   _exit(3) on the main thread
 *   _Exit   _Exit(4)
 *   quick_exit  quick_exit(8), which runs at_quick_exit's handlers, not atexit's
 *   thread  _exit(5) on a second thread after the steps, the main thread
 *           asleep
 *   two     two threads call _exit(3) and _exit(5) at the same moment
 *   handler _exit(3), and while the trace is being finished (slowly: run
 *           with GP_STUB_FLUSH_MS) a signal handler on the same thread
 *           calls _exit(9)
 *   vfork   a vfork()ed child calls _exit(7) after step 2 (as posix_spawn's
 *           fallbacks and shells do); then _exit(3)
 *   held    the main thread holds CUPTI's lock (stub_cupti.c) and calls
 *           _exit(6): the trace cannot be finished, the exit must come anyway
 *   sigterm a child sends SIGTERM; while the recorder finishes the trace for
 *           it, the main thread calls _exit(3): the signal ends the process,
 *           as it would have without gpuprof
 *   run     steps every 10 ms until killed
 *   threads after each of the six steps, 4 threads at once run 5 steps of
 *           their own (job_thread_step: a range, an allocation, 8 kernels'
 *           records through the stand-in CUPTI); then returns from main,
 *           printing `kernels N lost L`: the records made, and those that
 *           found no buffer
 *   busy    from step 1 on, 4 threads step without end (job_thread_step)
 *           while the main thread makes the six steps and returns from
 *           main: exit() finishes the trace with the threads recording
 *   busy_sigterm  busy's threads, and after the six steps a child sends
 *           SIGTERM, which ends the job while they record; the main
 *           thread sleeps
 *   cap     24 steps of 60 ms, each with 400 kernels' records (the
 *           default trace's size cap, GPUPROF_TRACE_CAP); returns from main
 *   reserve as exit, each step first reserving a segment of 8 MiB more,
 *           kept (the flight recorder's threshold)
 *   handled a child sends SIGTERM, which the job handles; 10 ms after its
 *           handler ran the job returns from main, the recorder's flush for
 *           the signal under way
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int job_start(const char *recorder);
void job_step(int n);
void job_reserve(unsigned bytes);
int job_thread_step(int kernels);

#define STEP_THREADS 4
#define STEP_KERNELS 8

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0)
		;
}

static _Atomic int stepped;
static pthread_barrier_t together;

static void *exit_thread(void *arg)
{
	(void)arg;
	while (!stepped)
		sleep_ms(1);
	_exit(5);
}

static void *exit_with_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&together);
	_exit(5);
}

static _Atomic int kernels_made, kernels_lost;

static void *step_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++) {
		int lost = job_thread_step(STEP_KERNELS);
		if (lost < 0) {
			kernels_lost += STEP_KERNELS; /* no stand-in CUPTI */
			continue;
		}
		kernels_made += STEP_KERNELS - lost;
		kernels_lost += lost;
		sleep_ms(1);
	}
	return NULL;
}

static void *busy_thread(void *arg)
{
	(void)arg;
	for (;;) {
		job_thread_step(STEP_KERNELS);
		sleep_ms(1);
	}
	return NULL;
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static void exit_9(int sig)
{
	(void)sig;
	_exit(9);
}

/* Signals the main thread once it is inside _exit's wait. */
static void *signal_main(void *arg)
{
	sleep_ms(200);
	pthread_kill(*(pthread_t *)arg, SIGUSR1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3 || job_start(argv[1]) != 0)
		return 2;
	const char *how = argv[2];
	if (strcmp(how, "run") == 0) {
		for (int n = 1;; n++) {
			job_step(n);
			sleep_ms(10);
		}
	}
	if (strcmp(how, "cap") == 0) {
		/* steps with kernels enough for a small GPUPROF_TRACE_CAP */
		for (int n = 1; n <= 24; n++) {
			job_step(n);
			if (job_thread_step(400) < 0)
				return 2; /* no stand-in CUPTI */
			sleep_ms(60);
		}
		return 0;
	}
	pthread_t t;
	if (strcmp(how, "thread") == 0 && pthread_create(&t, NULL, exit_thread, NULL) != 0)
		return 2;

	for (int n = 1; n <= 6; n++) {
		if (strcmp(how, "reserve") == 0)
			job_reserve(8u << 20);
		job_step(n);
		/* after step 1's NVTX mark: NVTX's own first-call setup is not
		 * made for threads racing to it */
		int busy = strcmp(how, "busy") == 0 || strcmp(how, "busy_sigterm") == 0;
		for (int i = 0; n == 1 && busy && i < STEP_THREADS; i++)
			if (pthread_create(&t, NULL, busy_thread, NULL) != 0)
				return 2;
		if (strcmp(how, "threads") == 0) {
			pthread_t workers[STEP_THREADS];
			for (int i = 0; i < STEP_THREADS; i++)
				if (pthread_create(&workers[i], NULL, step_thread, NULL) != 0)
					return 2;
			for (int i = 0; i < STEP_THREADS; i++)
				pthread_join(workers[i], NULL);
		}
		if (n == 2 && strcmp(how, "vfork") == 0) {
			pid_t child = vfork();
			if (child == 0)
				_exit(7);
			int st = 0;
			waitpid(child, &st, 0);
			printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			fflush(stdout);
		}
		/* reserve: slower, for the recorder's tick to see each step */
		sleep_ms(strcmp(how, "reserve") == 0 ? 300 : 20);
	}
	if (strcmp(how, "threads") == 0) {
		printf("kernels %d lost %d\n", kernels_made, kernels_lost);
		fflush(stdout);
	}
	if (strcmp(how, "thread") == 0) {
		stepped = 1;
		for (;;)
			sleep_ms(10); /* the other thread ends the process */
	}
	if (strcmp(how, "_exit") == 0 || strcmp(how, "vfork") == 0)
		_exit(3);
	if (strcmp(how, "two") == 0) {
		pthread_barrier_init(&together, NULL, 2);
		if (pthread_create(&t, NULL, exit_with_main, NULL) != 0)
			return 2;
		pthread_barrier_wait(&together);
		_exit(3);
	}
	if (strcmp(how, "handler") == 0) {
		static pthread_t main_thread;
		main_thread = pthread_self();
		signal(SIGUSR1, exit_9);
		if (pthread_create(&t, NULL, signal_main, &main_thread) != 0)
			return 2;
		_exit(3);
	}
	if (strcmp(how, "_Exit") == 0)
		_Exit(4);
	if (strcmp(how, "quick_exit") == 0)
		quick_exit(8);
	if (strcmp(how, "held") == 0) {
		void (*hold)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "gp_stub_cupti_hold");
		if (!hold)
			return 2;
		hold(1);
		_exit(6);
	}
	if (strcmp(how, "handled") == 0) {
		signal(SIGTERM, on_term);
		pid_t child = fork();
		if (child == 0) {
			kill(getppid(), SIGTERM);
			_exit(0);
		}
		waitpid(child, NULL, 0);
		while (!got_term)
			sleep_ms(1);
		sleep_ms(10); /* the recorder's thread has begun the flush */
		return 0;
	}
	if (strcmp(how, "busy_sigterm") == 0) {
		pid_t child = fork();
		if (child == 0) {
			kill(getppid(), SIGTERM);
			_exit(0);
		}
		waitpid(child, NULL, 0);
		for (;;)
			sleep_ms(10); /* the signal ends the process */
	}
	if (strcmp(how, "sigterm") == 0) {
		pid_t child = fork();
		if (child == 0) {
			kill(getppid(), SIGTERM);
			_exit(0);
		}
		waitpid(child, NULL, 0);
		sleep_ms(50); /* the signal arrived: the trace is being finished */
		_exit(3);
	}
	return 0;
}
