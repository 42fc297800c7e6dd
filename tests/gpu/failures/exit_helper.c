/* A C library that ends its process with _exit() on a thread of its own
 * (exit_job.py thread): the call goes through this library's own GOT slot
 * of _exit, as a program's extension or a launcher's calls do. Built by
 * run.py with the machine's C compiler. */
#include <pthread.h>
#include <unistd.h>

static void *ender(void *arg)
{
	_exit((int)(long)arg);
}

int exit_from_thread(int status)
{
	pthread_t t;
	return pthread_create(&t, NULL, ender, (void *)(long)status);
}
