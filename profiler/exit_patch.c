/* The program's _exit() and _Exit() calls, seen by the recorder first
 * (exit_patch.h). */
#include "exit_patch.h"
#include "got_patch.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static gp_exit_hook_fn hook;
static _Atomic int started;
/* The process that started: a fork()ed child (its copy of the wrappers)
 * and a vfork()ed one (the parent's memory, shared) end at once, touching
 * nothing. */
static pid_t owner;
/* The thread of the first caller: a second caller on another thread
 * waits for the first to end the process, as the hook is bounded; the
 * same thread again (a signal handler that calls _exit, run while the
 * hook waits) ends it at once. */
static _Atomic pid_t hooking;

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
}

static _Noreturn void finish_and_exit(int status)
{
	if (hook && getpid() == owner) {
		pid_t me = (pid_t)syscall(SYS_gettid), first = 0;
		if (atomic_compare_exchange_strong(&hooking, &first, me)) {
			hook(status);
		} else if (first != me) {
			/* Longer than any hook: only a first caller that never
			 * came back (a cancelled thread) lets this one go on. */
			for (int waited = 0; waited < 10 * 60 * 1000; waited += 2)
				sleep_ms(2);
		}
	}
	/* This object's own call: its slot is never patched (got_patch.c
	 * leaves the replacements' object alone), so this is libc's _exit. */
	_exit(status);
}

static _Noreturn void wrap_exit(int status)
{
	finish_and_exit(status);
}

static _Noreturn void wrap_Exit(int status)
{
	finish_and_exit(status);
}

static struct gp_got_target targets[] = {
	{ .name = "_exit", .replacement = (void *)wrap_exit },
	{ .name = "_Exit", .replacement = (void *)wrap_Exit },
};
static struct gp_got_set slots = { .targets = targets, .n = sizeof(targets) / sizeof(targets[0]) };

int gp_exit_start(gp_exit_hook_fn fn)
{
	if (atomic_exchange(&started, 1))
		return -EALREADY;
	hook = fn;
	owner = getpid();
	struct gp_got_result res;
	return gp_got_patch(&slots, &res);
}

int gp_exit_refresh(void)
{
	if (!atomic_load(&started))
		return 0;
	struct gp_got_result res;
	return gp_got_refresh(&slots, &res);
}
