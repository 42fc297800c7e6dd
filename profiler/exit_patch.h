/* The program's _exit() and _Exit() calls, seen by the recorder first.
 *
 * exit() runs the atexit handlers, where the recorder finishes its trace;
 * _exit() and _Exit() end the process at once (Python's os._exit(), a
 * multiprocessing worker's end, launchers, C programs that skip their own
 * clean-up), and with them the writer thread, leaving the trace cut short
 * at its last flush. The recorder is loaded with dlopen (CUDA's
 * CUDA_INJECTION64_PATH), after the program's objects were bound to libc's
 * _exit, so interposing the symbol does nothing: instead the loaded
 * objects' calls of _exit and _Exit go through a wrapper (their GOT slots,
 * got_patch.h) that calls the hook, then the real _exit with the same
 * status. Objects loaded later are patched by gp_exit_refresh(); a call
 * made another way (libc's own, a raw exit_group system call, a library
 * linked statically) ends the process as before.
 *
 * No CUDA here; the hook decides what to do (inject.c: a fork()ed or
 * vfork()ed child, or a recorder not running, does nothing). */
#ifndef GPUPROF_EXIT_PATCH_H
#define GPUPROF_EXIT_PATCH_H

/* Called on the thread that called _exit or _Exit, with its status, before
 * the process ends; it must be async-signal-safe (_exit is, and is called
 * from signal handlers and vfork()ed children) and return in bounded time. */
typedef void (*gp_exit_hook_fn)(int status);

/* Redirects the loaded objects' calls of _exit and _Exit to the hook. Once
 * per process: 0, -EALREADY, or got_patch.h's -errno. */
int gp_exit_start(gp_exit_hook_fn hook);

/* Now and then, from a thread of gpuprof's own: redirects the calls of
 * objects loaded since. 1 when it patched, 0 when nothing changed, or
 * -errno. */
int gp_exit_refresh(void);

#endif
