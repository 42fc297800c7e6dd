"""The RESULT rows the GPU suite's checkers print (tests/run_gpu_suite.sh
keeps them in its table): `RESULT <prefix>.<case> PASS|FAIL <what>`, one a
check, counted so that the checker exits 1 when one failed. Safe to call
from several threads; log: a file each row is also appended to.

    row = Rows("ranks")
    row("toy.peak", ok, "allocated peak ...")
    sys.exit(row.exit_status())"""
import threading


class Rows:
    def __init__(self, prefix, log=None):
        self.prefix, self.log = prefix, log
        self.failed = 0
        self._lock = threading.Lock()

    def __call__(self, case, ok, what):
        line = "RESULT %s.%s %s %s" % (self.prefix, case, "PASS" if ok else "FAIL", what)
        with self._lock:
            self.failed += not ok
            print(line, flush=True)
            if self.log:
                with open(self.log, "a") as f:
                    f.write(line + "\n")

    def exit_status(self):
        return 1 if self.failed else 0
