/* The signals that end programs, seen by the recorder first.
 *
 * SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS and SIGFPE:
 * when one arrives the recorder is told (so that the trace holds everything
 * up to that moment), then the program gets the signal exactly as it would
 * have without gpuprof: its own handler runs, an ignored signal stays
 * ignored, and a signal left to its default action ends the process with
 * the same status and core dump.
 *
 * To stay first, gpuprof keeps the kernel's disposition of these signals and
 * shows the program the one it asked for: the program's calls of sigaction,
 * signal, bsd_signal and sysv_signal for them go through wrappers (their GOT
 * slots, got_patch.h) that record what it asks and answer what it asked
 * before. Calls made another way (a raw system call, a library linked
 * statically) replace gpuprof's handler: that signal then reaches the
 * program alone, as without gpuprof.
 *
 * No CUDA here, so that it is tested on its own (tests/recorder/). */
#ifndef GPUPROF_SIGNALS_H
#define GPUPROF_SIGNALS_H

/* Called before the program's disposition is applied: ends is 1 when the
 * program is about to die of sig (default action), 0 when its own handler
 * runs next. For a fault or a signal the program sent itself, inside the
 * signal handler, on the thread it stopped; for a signal sent from outside,
 * on a thread of gpuprof's own while the program runs on (signals.c says
 * why): dying of it, the program ends when the hook returns; handling it,
 * its handler runs meanwhile. It must be async-signal-safe and return in
 * bounded time. Not called again for a signal that arrives while it runs
 * (that signal then takes the program's disposition at once). */
typedef void (*gp_sig_hook_fn)(int sig, int ends);

/* Takes over the signals above: each one's present disposition becomes the
 * program's, and every one not ignored gets gpuprof's handler; the loaded
 * objects' calls of the functions above are redirected (where that fails,
 * the handlers stay, as described above for calls made another way). Once
 * per process: 0, or -EALREADY. */
int gp_sig_start(gp_sig_hook_fn hook);

/* Now and then, from a thread of gpuprof's own: redirects the calls of
 * objects loaded since. 1 when it patched, 0 when nothing changed, or
 * -errno. */
int gp_sig_refresh(void);

/* For an exit that runs no atexit handler (_exit: exit_patch.h): while a
 * signal from outside is ending the process (its hook running on
 * gpuprof's thread), waits for it to, as exit() does; else returns at
 * once. Async-signal-safe. */
void gp_sig_hold_exit(void);

/* Whether sig is one of the signals above. */
int gp_sig_watched(int sig);

/* "SIGTERM", ...; NULL for another number. */
const char *gp_sig_name(int sig);

#endif
