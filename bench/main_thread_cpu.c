/* The CPU time of a process's main thread, on stderr at exit: for hosts
 * without perf, what bounds `gpuprof analyze` on many cores (its main
 * thread analyzes what the reader's workers inflated, scanned and decoded;
 * bench/RESULTS.md, "Analyzer speed").
 *
 *   cc -O2 -shared -fPIC -o main_thread_cpu.so bench/main_thread_cpu.c
 *   env LD_PRELOAD=$PWD/main_thread_cpu.so gpuprof analyze --json T.json.gz
 *   -> "main-thread-cpu SECONDS" on stderr (user + system)
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdio.h>
#include <sys/resource.h>

/* exit() runs destructors on the thread that called it: main's, here */
__attribute__((destructor)) static void report(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) == 0)
		fprintf(stderr, "main-thread-cpu %.3f\n",
			(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}
