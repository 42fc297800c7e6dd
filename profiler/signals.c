/* The signals that end programs, seen by the recorder first (signals.h).
 *
 * The kernel's disposition of a watched signal is gpuprof's handler unless
 * the program ignores the signal; the program's own disposition lives in
 * program[] and is what the wrappers below answer. The handler tells the
 * hook, then does what the kernel would have done with the program's
 * disposition: call its handler (resetting a one-shot one first), or, for
 * the default action, put the default back and let the signal end the
 * process: raised again, or, for a fault the faulting instruction made,
 * by returning to that instruction, which faults again with the default in
 * place, so the core dump shows the fault where it happened.
 *
 * A signal sent from outside (another process, the terminal) interrupts a
 * thread at any point, perhaps inside CUPTI or malloc holding a lock that
 * the work of finishing the trace needs: waiting for that work in the
 * handler can wait for the interrupted thread itself. So for such a signal
 * the handler only wakes a thread of gpuprof's own (the finisher) and
 * returns; the finisher calls the hook, then puts the default back and
 * raises the signal, which ends the process as it would have. The program
 * runs on meanwhile (as long as the hook takes: the trace's end); an exit
 * it makes meanwhile waits for the signal (an atexit handler), and another
 * signal that would end it is dropped, the first one ends it. A fault the
 * program made, and a signal it sent itself (raise, abort, kill of its own
 * pid), are hooked in the handler, as the program goes no further.
 *
 * Everything the handler and the wrappers do is async-signal-safe: a
 * program may change a disposition inside a handler (faulthandler does,
 * before raising the signal again), so there is no malloc and no mutex,
 * only a spinlock taken with every signal blocked. */
#include "signals.h"
#include "got_patch.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct {
	int sig;
	const char *name;
} watched[] = {
	{ SIGTERM, "SIGTERM" }, { SIGINT, "SIGINT" },   { SIGHUP, "SIGHUP" }, { SIGQUIT, "SIGQUIT" },
	{ SIGABRT, "SIGABRT" }, { SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
};
#define N_WATCHED (sizeof(watched) / sizeof(watched[0]))

/* Each change of a program's disposition takes the next of a signal's
 * records, so that a handler running on another thread keeps reading the
 * one it loaded; it would take this many changes during that one handler
 * to reuse it. */
#define RECORDS 16

struct program_disposition {
	struct sigaction records[RECORDS];
	unsigned next;                   /* under change_lock */
	struct sigaction *_Atomic now;   /* NULL: not taken over */
};
static struct program_disposition program[N_WATCHED];
static atomic_flag change_lock = ATOMIC_FLAG_INIT;
static gp_sig_hook_fn hook;
static _Atomic int started;
static _Atomic int hooking;

/* The finisher (see the top): woken by the handler through a semaphore,
 * the one waking call that is async-signal-safe. */
static sem_t finisher_wake;
static _Atomic int finisher_running;
static pid_t finisher_pid; /* a fork()ed child has no finisher */
/* The signal the process is dying of, sent from outside: set once by the
 * handler, 0 before. */
static _Atomic int dying;
/* A handled signal from outside: the finisher calls the hook for it while
 * the program's handler runs. */
static _Atomic int handled_sig;

/* Longest that an exit made while the finisher works waits for the
 * signal: the hook is bounded by its own limit (GPUPROF_SIGNAL_WAIT_MS
 * for the recorder); this only keeps a broken hook from holding the exit
 * for ever. */
#define EXIT_WAIT_MS (15 * 60 * 1000)

static int slot_of(int sig)
{
	for (size_t i = 0; i < N_WATCHED; i++)
		if (watched[i].sig == sig)
			return (int)i;
	return -1;
}

int gp_sig_watched(int sig)
{
	return slot_of(sig) >= 0;
}

const char *gp_sig_name(int sig)
{
	int i = slot_of(sig);
	return i < 0 ? NULL : watched[i].name;
}

static int is_handler(const struct sigaction *p)
{
	return p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN;
}

static void on_signal(int sig, siginfo_t *si, void *uc);

/* The kernel's disposition for the program's p. Ignored stays ignored, so
 * the kernel discards the signal as before; otherwise gpuprof's handler,
 * with the program's restart, alternate-stack and deferral flags and its
 * mask, so that the program's handler runs as it asked (a one-shot handler
 * is reset by on_signal, after the hook has run). Our own call of
 * sigaction is never redirected: this object is not patched. */
static int install(int sig, const struct sigaction *p)
{
	struct sigaction k;
	memset(&k, 0, sizeof(k));
	sigemptyset(&k.sa_mask);
	if (p->sa_handler == SIG_IGN) {
		k.sa_handler = SIG_IGN;
	} else if (p->sa_handler == SIG_DFL) {
		k.sa_sigaction = on_signal;
		k.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	} else {
		k.sa_sigaction = on_signal;
		k.sa_mask = p->sa_mask;
		k.sa_flags = SA_SIGINFO | (p->sa_flags & (SA_ONSTACK | SA_RESTART | SA_NODEFER));
	}
	return sigaction(sig, &k, NULL) == 0 ? 0 : -errno;
}

/* The default action, as sigaction takes it. */
static void default_action(struct sigaction *d)
{
	memset(d, 0, sizeof(*d));
	d->sa_handler = SIG_DFL;
	sigemptyset(&d->sa_mask);
}

static void lock_changes(sigset_t *saved)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
	while (atomic_flag_test_and_set_explicit(&change_lock, memory_order_acquire))
		;
}

static void unlock_changes(const sigset_t *saved)
{
	atomic_flag_clear_explicit(&change_lock, memory_order_release);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The program's sigaction for a watched signal taken over: answers what it
 * set before, records act as its disposition and installs it. */
static int program_sigaction(int i, const struct sigaction *act, struct sigaction *old)
{
	sigset_t saved;
	int err = 0;
	lock_changes(&saved);
	struct program_disposition *pd = &program[i];
	struct sigaction *cur = atomic_load(&pd->now);
	if (old)
		*old = *cur;
	if (act) {
		struct sigaction *rec = &pd->records[pd->next++ % RECORDS];
		*rec = *act;
		atomic_store(&pd->now, rec);
		err = install(watched[i].sig, rec);
	}
	unlock_changes(&saved);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

static int wrap_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = slot_of(sig);
	if (i < 0 || !atomic_load(&program[i].now))
		return sigaction(sig, act, old);
	return program_sigaction(i, act, old);
}

/* signal() and its relatives, as glibc defines them, over the above. */
static __sighandler_t set_handler(int sig, __sighandler_t h, int flags, int mask_self)
{
	int i = slot_of(sig);
	if (h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	if (i < 0 || !atomic_load(&program[i].now)) {
		/* glibc's own, as the caller would have had it */
		if (flags & SA_RESETHAND)
			return sysv_signal(sig, h);
		return signal(sig, h);
	}
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	sigemptyset(&act.sa_mask);
	if (mask_self)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (program_sigaction(i, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

static __sighandler_t wrap_signal(int sig, __sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART, 1);
}

static __sighandler_t wrap_sysv_signal(int sig, __sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

static struct gp_got_target targets[] = {
	{ .name = "sigaction", .replacement = (void *)wrap_sigaction },
	{ .name = "__sigaction", .replacement = (void *)wrap_sigaction },
	{ .name = "signal", .replacement = (void *)wrap_signal },
	{ .name = "bsd_signal", .replacement = (void *)wrap_signal },
	{ .name = "sysv_signal", .replacement = (void *)wrap_sysv_signal },
	{ .name = "__sysv_signal", .replacement = (void *)wrap_sysv_signal },
};
static struct gp_got_set slots = { .targets = targets, .n = sizeof(targets) / sizeof(targets[0]) };

/* A fault made by the instruction that the handler returns to. */
static int made_by_instruction(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE) && si && si->si_code > 0;
}

/* Sent from outside: by another process (kill, sigqueue, tgkill), a timer
 * or the kernel for the terminal (SI_KERNEL). Not a fault, and not sent by
 * this process (raise, abort, pthread_kill, kill of its own pid), after
 * which the program goes no further until the handler returns. Without
 * siginfo nothing is known: handled as a signal of its own. */
static int sent_from_outside(int sig, const siginfo_t *si)
{
	if (!si || made_by_instruction(sig, si))
		return 0;
	if (si->si_code == SI_KERNEL)
		return 1;
	return si->si_code <= 0 && si->si_pid != getpid();
}

static int finisher_here(void)
{
	return atomic_load(&finisher_running) && getpid() == finisher_pid;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* Waits while the finisher works, up to ms. */
static void wait_while_dying(long ms)
{
	for (long waited = 0; waited < ms && atomic_load(&dying); waited += 2)
		sleep_ms(2);
}

static void call_hook(int sig, int ends)
{
	if (hook && !atomic_exchange(&hooking, 1)) {
		int saved_errno = errno;
		hook(sig, ends);
		errno = saved_errno;
		atomic_store(&hooking, 0);
	}
}

/* The finisher's end: the signal, with the default action, ends the
 * process. Every signal is blocked on this thread but that one. */
static void die_of(int sig)
{
	struct sigaction dfl;
	default_action(&dfl);
	sigaction(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}

static void *finisher_main(void *arg)
{
	(void)arg;
	for (;;) {
		if (sem_wait(&finisher_wake) != 0)
			continue; /* EINTR */
		int sig = atomic_load(&dying);
		if (sig) {
			call_hook(sig, 1);
			die_of(sig);
			/* not reached: all eight end a process by default */
			atomic_store(&dying, 0);
			continue;
		}
		sig = atomic_exchange(&handled_sig, 0);
		if (sig)
			call_hook(sig, 0);
	}
	return NULL;
}

/* An exit made while a signal from outside is being finished: the signal
 * would have ended the process first, so the exit waits for it. */
static void on_exit_while_dying(void)
{
	if (getpid() == finisher_pid && atomic_load(&dying))
		wait_while_dying(EXIT_WAIT_MS);
}

void gp_sig_hold_exit(void)
{
	on_exit_while_dying();
}

static void start_finisher(void)
{
	if (sem_init(&finisher_wake, 0, 0) != 0)
		return;
	/* Signals blocked on it: the program's signals go to the program's
	 * threads, as before. */
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	pthread_t t;
	int r = pthread_create(&t, NULL, finisher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (r != 0)
		return; /* every signal is then hooked in the handler */
	pthread_detach(t);
	pthread_setname_np(t, "gpuprof-signal");
	finisher_pid = getpid();
	atexit(on_exit_while_dying);
	atomic_store(&finisher_running, 1);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int i = slot_of(sig);
	if (i < 0)
		return;
	int outside = sent_from_outside(sig, si) && finisher_here();
	if (finisher_here() && atomic_load(&dying)) {
		/* Already dying of a signal from outside, which ends the process
		 * first; a fault cannot go on: it waits for that end. */
		if (!made_by_instruction(sig, si))
			return;
		wait_while_dying(EXIT_WAIT_MS);
	}
	struct sigaction *p = atomic_load(&program[i].now);
	if (!p || p->sa_handler == SIG_IGN)
		return; /* ignored since the signal was sent */
	int ends = !is_handler(p);

	if (outside && ends) {
		int none = 0;
		if (atomic_compare_exchange_strong(&dying, &none, sig))
			sem_post(&finisher_wake);
		return;
	}
	if (outside) {
		atomic_store(&handled_sig, sig);
		sem_post(&finisher_wake);
	} else {
		call_hook(sig, ends);
	}
	struct sigaction dfl;
	default_action(&dfl);
	if (ends) {
		sigaction(sig, &dfl, NULL);
		/* Blocked while this handler runs: delivered, with the default,
		 * as it returns. */
		if (!made_by_instruction(sig, si))
			raise(sig);
		return;
	}
	if (p->sa_flags & SA_RESETHAND) {
		/* The kernel resets a one-shot handler as it delivers. */
		program_sigaction(i, &dfl, NULL);
	}
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, si, uc);
	else
		p->sa_handler(sig);
}

int gp_sig_start(gp_sig_hook_fn fn)
{
	if (atomic_exchange(&started, 1))
		return -EALREADY;
	hook = fn;
	start_finisher();
	sigset_t saved;
	lock_changes(&saved);
	for (size_t i = 0; i < N_WATCHED; i++) {
		struct program_disposition *pd = &program[i];
		struct sigaction *rec = &pd->records[pd->next++];
		if (sigaction(watched[i].sig, NULL, rec) != 0)
			continue; /* left to the program alone */
		if (rec->sa_handler == SIG_IGN) {
			atomic_store(&pd->now, rec); /* taken over: a later handler is ours too */
			continue;
		}
		atomic_store(&pd->now, rec);
		if (install(watched[i].sig, rec) != 0)
			atomic_store(&pd->now, NULL);
	}
	unlock_changes(&saved);
	/* Where it fails (or is not supported), a later change of the
	 * program's own replaces gpuprof's handler: said by signals.h. */
	struct gp_got_result res;
	gp_got_patch(&slots, &res);
	return 0;
}

int gp_sig_refresh(void)
{
	if (!atomic_load(&started))
		return 0;
	struct gp_got_result res;
	return gp_got_refresh(&slots, &res);
}
