#!/usr/bin/env python3
"""profiler/signals.c preloaded (guard_preload.c) into programs that die of,
handle or ignore the signals gpuprof watches: each program ends exactly as
it does without it (exit status, the signal, the core dump), and the hook
ran first, saying whether the program was about to die.

usage: test_signals.py PRELOAD VICTIM"""
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import unittest

PRELOAD = VICTIM = None
PY = sys.executable


def run(argv, preload, tmp, hook_ms=0, ignore=(), send=None, worker=False):
    """Runs argv with SIGINT at its default (a background job's ignored
    SIGINT would survive exec) and the signals in ignore ignored; with send,
    sends that signal from here once the program printed "ready\\n"; returns
    (raw wait status, stdout, stderr, hook lines)."""
    log = os.path.join(tmp, "hook.log")
    if os.path.exists(log):
        os.unlink(log)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = PRELOAD
        env["GP_SIGTEST_LOG"] = log
        env["GP_SIGTEST_HOOK_MS"] = str(hook_ms)
        if worker:
            env["GP_SIGTEST_WORKER"] = "1"
    out = os.path.join(tmp, "out")
    err = os.path.join(tmp, "err")
    for f in (out, err):
        if os.path.exists(f):
            os.unlink(f)  # the last run's "ready" is not this one's
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(tmp)
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
                signal.signal(s, signal.SIG_IGN if s in ignore else signal.SIG_DFL)
            fo = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            fe = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fo, 1)
            os.dup2(fe, 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    if send:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (os.path.exists(out) and "ready\n" in read(out)):
            time.sleep(0.005)
        os.kill(pid, send)
    status = wait(pid, 30)
    hooks = read(log).split("\n")[:-1] if os.path.exists(log) else []
    for f in os.listdir(tmp):
        if f.startswith("core"):
            os.unlink(os.path.join(tmp, f))
    return status, read(out), read(err), hooks


def read(path):
    with open(path) as f:
        return f.read()


def wait(pid, seconds):
    """The raw wait status; a program still running after seconds is
    killed, and that is what its status says."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def how(status):
    if os.WIFSIGNALED(status):
        return "signal %d%s" % (os.WTERMSIG(status), " (core)" if os.WCOREDUMP(status) else "")
    return "exit %d" % os.WEXITSTATUS(status)


class Signals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gp_sigtest_")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def same(self, argv, hooks, hook_ms=0, ignore=(), stdout_too=True, send=None, worker=False):
        """Ends as it does unprofiled; the hook lines are hooks."""
        plain = run(argv, False, self.tmp, ignore=ignore, send=send)
        guarded = run(argv, True, self.tmp, hook_ms, ignore, send, worker)
        self.assertEqual(how(guarded[0]), how(plain[0]), "%s: %s" % (argv, guarded[2]))
        if stdout_too:
            self.assertEqual(guarded[1], plain[1])
        self.assertEqual(guarded[3], hooks)
        return plain, guarded

    def test_faults_made_by_the_program(self):
        for case, sig in (("segv", 11), ("fpe", 8), ("bus", 7), ("abort", 6)):
            with self.subTest(case=case):
                plain, _ = self.same([VICTIM, case], ["hook %d 1" % sig])
                self.assertTrue(os.WIFSIGNALED(plain[0]))
                self.assertEqual(os.WTERMSIG(plain[0]), sig)

    def test_sent_from_outside(self):
        for sig in (15, 2, 1, 3, 6, 11, 7, 8):
            with self.subTest(sig=sig):
                self.same([VICTIM, "kill-%d" % sig], ["hook %d 1" % sig])

    def test_sent_from_another_process(self):
        # the program runs on while the hook works, then dies of it
        for sig in (15, 2, 1, 3):
            with self.subTest(sig=sig):
                self.same([VICTIM, "hold"], ["hook %d 1" % sig], send=sig)

    def test_hook_needs_a_lock_the_interrupted_thread_holds(self):
        # as the recorder's writer needs CUPTI's and malloc's locks: a hook
        # waiting inside the handler would wait for the thread it stopped
        for sig in (15, 3):
            with self.subTest(sig=sig):
                self.same([VICTIM, "hold"], ["hook %d 1" % sig, "worker done"], send=sig, worker=True)

    def test_exit_while_the_hook_works_waits_for_the_signal(self):
        # unprofiled the signal ends it before its exit(0); profiled the
        # exit comes while the hook still works, and waits for the signal
        plain, guarded = self.same([VICTIM, "exit-soon"], ["hook 15 1"], hook_ms=1500, send=15,
                                   stdout_too=False)
        self.assertEqual(how(guarded[0]), "signal 15")

    def test_the_hook_may_take_its_time(self):
        self.same([VICTIM, "kill-15"], ["hook 15 1"], hook_ms=300)
        self.same([VICTIM, "segv"], ["hook 11 1"], hook_ms=300)

    def test_program_sees_its_own_dispositions(self):
        plain, _ = self.same([VICTIM, "query"], ["hook 15 0", "hook 15 1"])
        self.assertEqual(plain[1], "initial default\nset own\nhandled 100\nsignal() returned own\n")

    def test_handled_signals_keep_being_handled(self):
        plain, _ = self.same([VICTIM, "handle"], ["hook 1 0", "hook 1 0"])
        self.assertEqual(plain[1], "handled 2\n")

    def test_one_shot_handler_resets(self):
        plain, _ = self.same([VICTIM, "oneshot"], ["hook 3 0", "hook 3 1"])
        self.assertEqual(plain[1], "handled 1\n")

    def test_ignored_stays_ignored(self):
        self.same([VICTIM, "ignore"], [])
        # ignored before it starts (nohup, a background job): never hooked
        plain, guarded = self.same([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGHUP); "
                                    "print('alive')"], [], ignore=(signal.SIGHUP,))
        self.assertEqual(plain[1], "alive\n")

    def test_forked_child(self):
        plain, _ = self.same([VICTIM, "fork"], ["hook 15 1 child"])
        self.assertEqual(plain[1], "child signal 15\n")

    def test_python_keyboard_interrupt(self):
        # Python's handler raises KeyboardInterrupt; the program's finally
        # runs; Python then dies of SIGINT with the default put back
        code = ("import os, signal\ntry:\n    os.kill(os.getpid(), signal.SIGINT)\n"
                "    import time; time.sleep(5)\nfinally:\n    print('finally')\n")
        plain, guarded = self.same([PY, "-c", code], ["hook 2 0", "hook 2 1"])
        self.assertEqual(plain[1], "finally\n")
        self.assertIn("KeyboardInterrupt", guarded[2])

    def test_python_own_handler(self):
        code = ("import os, signal\nsignal.signal(signal.SIGTERM, lambda s, f: print('handler', s))\n"
                "os.kill(os.getpid(), signal.SIGTERM)\nprint('after')\n"
                "signal.signal(signal.SIGTERM, signal.SIG_DFL)\nos.kill(os.getpid(), signal.SIGTERM)\n")
        plain, _ = self.same([PY, "-c", code], ["hook 15 0", "hook 15 1"])
        self.assertEqual(plain[1], "handler 15\nafter\n")

    def test_python_faulthandler(self):
        # faulthandler's handler prints the traceback, puts the previous
        # disposition back and raises the signal again
        code = "import ctypes, faulthandler\nfaulthandler.enable()\nctypes.string_at(0)\n"
        _, guarded = self.same([PY, "-c", code], ["hook 11 0", "hook 11 1"])
        self.assertIn("Segmentation fault", guarded[2])


if __name__ == "__main__":
    PRELOAD, VICTIM = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    # a core dump where there would be one: allowed here, kept nowhere
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    unittest.main()
