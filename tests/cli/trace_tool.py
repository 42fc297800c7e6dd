"""Test helper: writes and checks gpuprof traces (exporters/TRACE_FORMAT.md).

  trace_tool.py write PATH N [--pid P] [--cut flush|middle]
      meta + N alloc events + gpuprof.end, one gzip member. --cut flush: the
      end and the trailer are missing and the stream stops after a sync flush
      in the middle of an event line (what a SIGKILL leaves); --cut middle:
      the file is truncated halfway, anywhere in the deflate stream.
  trace_tool.py check PATH [--recovered yes|no] [--events K]
      the file is one complete gzip member holding a JSON array whose first
      event is gpuprof.meta and last is gpuprof.end (with args.recovered as
      given); K counts the events before gpuprof.end. Prints that count.
  trace_tool.py program N
      plays a traced program under `gpuprof --trace` with a recorder: see
      test_trace_files.sh.
"""
import gzip
import json
import os
import signal
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "exporters"))
from trace_format import EV, F, FORMAT, KIND, T  # noqa: E402  (the names of the trace)


def event(ev, pid, tid, ts, args, cat=False):
    """One line: ph, s, name, cat (when asked), pid, tid, ts with three
    decimals as the recorder writes it, args."""
    head = [(T.PH, ev.ph), (T.S, ev.scope), (T.NAME, ev.name)] + ([(T.CAT, ev.cat)] if cat else [])
    head += [(T.PID, pid), (T.TID, tid)]
    return "{%s,%s:%.3f,%s:%s}" % (",".join("%s:%s" % (json.dumps(k), json.dumps(v)) for k, v in head),
                                   json.dumps(T.TS), ts, json.dumps(T.ARGS),
                                   json.dumps(args, separators=(",", ":"), ensure_ascii=False))


def meta(pid, extra=None):
    args = {F.FORMAT: FORMAT, F.VERSION: "0.1.0", F.PID: pid, F.PPID: os.getppid(),
            F.CMDLINE: "trace_tool.py", F.HOSTNAME: "test", F.START_UNIX_NS: time.time_ns(),
            F.TS_BASE_NS: 1000, F.CLOCK: "cupti", F.MODE: "cuda",
            F.GPU_PID_BASE: 1000000000 + pid * 100}
    args.update(extra or {})
    return event(EV.META, pid, pid, 0, args)


def alloc(pid, i):
    gpu = 1000000000 + pid * 100
    args = {F.ADDR: "0x%x" % (0x7f0000000000 + i * 4096), F.BYTES: 4096 * (i + 1),
            F.KIND: KIND.DEVICE, F.DEVICE: 0, F.STREAM: -1, F.CORR: i + 1, F.ASYNC: False,
            "note": "é \u2603 \"quoted\""}
    return event(EV.ALLOC, gpu, 0, 1.5 + i, args, cat=True)


def end(pid, n):
    args = {F.CLEAN: True, F.RECOVERED: False, F.DROPPED_CUPTI: 0, F.DROPPED_HOST: 0,
            F.LATE_MEMORY_RECORDS: 0, F.RECORDS: n, F.EVENTS: n + 2,
            F.DEVICES: [{F.DEVICE: 0, F.NAME: "Test GPU", F.TOTAL_MEMORY: 1 << 34}]}
    return event(EV.END, pid, 0, 2.0 + n, args)


def write(path, n, pid=None, cut=None, extra=None):
    pid = os.getpid() if pid is None else pid
    events = [meta(pid, extra)] + [alloc(pid, i) for i in range(n)]
    z = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    data = z.compress(b"[\n" + "".join(e + ",\n" for e in events).encode())
    if cut == "flush":
        data += z.flush(zlib.Z_SYNC_FLUSH)
        partial = alloc(pid, n).encode()
        data += z.compress(partial[: len(partial) // 2]) + z.flush(zlib.Z_SYNC_FLUSH)
    else:
        data += z.compress((end(pid, n) + "\n]\n").encode()) + z.flush(zlib.Z_FINISH)
        if cut == "middle":
            data = data[: len(data) // 2]
    # O_EXCL: like the recorder, never overwrite
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def check(path, recovered=None, events=None):
    with gzip.open(path, "rb") as f:
        text = f.read().decode()  # raises unless the member is complete
    trace = json.loads(text)
    assert isinstance(trace, list) and len(trace) >= 2, "not an array of events"
    assert trace[0][T.NAME] == EV.META.name, "first event is %r" % trace[0][T.NAME]
    assert trace[-1][T.NAME] == EV.END.name, "last event is %r" % trace[-1][T.NAME]
    if recovered is not None:
        got = trace[-1][T.ARGS].get(F.RECOVERED)
        assert got is recovered, "recovered is %r" % got
    if events is not None:
        assert len(trace) - 1 == events, "%d events before the end" % (len(trace) - 1)
    print(len(trace) - 1)


def child_name(output, pid):
    """exporters/trace_names.h gp_child_trace_path()"""
    if output.endswith(".json.gz") and len(output) > len(".json.gz"):
        return "%s.%d.json.gz" % (output[: -len(".json.gz")], pid)
    return "%s.%d" % (output, pid)


def program(n):
    """A traced program with children, as the recorder would leave it:
    - its own trace, cut short (it ends killed by SIGKILL);
    - a complete trace of a child that has ended;
    - a trace cut short of a child that still runs (its pid in running.pid);
    - an old file with a child's name (an earlier run), and a look-alike."""
    out = os.environ["GPUPROF_OUTPUT"]
    assert os.environ["GPUPROF_ROOT_PID"] == str(os.getpid())
    write(out, n, cut="flush")
    done_pid = subprocess.Popen(["true"])
    done_pid.wait()
    write(child_name(out, done_pid.pid), 2, pid=done_pid.pid)
    running = subprocess.Popen(["sleep", "30"], start_new_session=True)
    write(child_name(out, running.pid), 1, pid=running.pid, cut="flush")
    with open("running.pid", "w") as f:
        f.write("%d\n" % running.pid)
    stale = child_name(out, 1)
    write(stale, 1, pid=1, cut="flush")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    write(out[: -len(".json.gz")] + ".12x.json.gz", 1, cut="flush")
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def run_meta(rank=None, world=None):
    """gpuprof.meta of a process in a run directory, as the recorder writes it."""
    import socket
    extra = {F.HOSTNAME: socket.gethostname(), F.ROOT_PID: os.environ["GPUPROF_ROOT_PID"]}
    if rank is not None:
        extra.update({F.RANK: rank, F.WORLD_SIZE: world, F.LOCAL_RANK: rank, F.LOCAL_WORLD_SIZE: world})
    return extra


def torchrun(world):
    """Plays torchrun in a run directory (GPUPROF_RUN_DIR): its workers, each
    with its RANK, write rank<R>.<pid>.json.gz; rank 1 is killed with its trace
    cut short; the launcher itself uses no CUDA. Also a process with no rank
    (proc.<host>.<pid>.json.gz) and another launcher's trace (another
    root_pid), which this launcher must not list."""
    import socket
    run = os.environ["GPUPROF_RUN_DIR"]
    assert "GPUPROF_OUTPUT" not in os.environ
    procs = []
    for rank in range(world):
        p = subprocess.Popen(["sleep", "0"])
        p.wait()
        write(os.path.join(run, "rank%d.%d.json.gz" % (rank, p.pid)), 2 + rank, pid=p.pid,
              cut="flush" if rank == 1 else None, extra=run_meta(rank, world))
        procs.append(p)
    host = "".join(c if c.isalnum() or c in "._-" else "_" for c in socket.gethostname())[:64]
    write(os.path.join(run, "proc.%s.%d.json.gz" % (host, os.getpid())), 1, extra=run_meta())
    other = dict(run_meta(7, world), **{F.ROOT_PID: "1"})
    write(os.path.join(run, "rank7.99999.json.gz"), 1, pid=99999, extra=other)


def main():
    import argparse
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("path")
    w.add_argument("n", type=int)
    w.add_argument("--pid", type=int)
    w.add_argument("--cut", choices=["flush", "middle"])
    c = sub.add_parser("check")
    c.add_argument("path")
    c.add_argument("--recovered", choices=["yes", "no"])
    c.add_argument("--events", type=int)
    p = sub.add_parser("program")
    p.add_argument("n", type=int)
    t = sub.add_parser("torchrun")
    t.add_argument("world", type=int)
    a = ap.parse_args()
    if a.cmd == "write":
        write(a.path, a.n, pid=a.pid, cut=a.cut)
    elif a.cmd == "check":
        check(a.path, None if a.recovered is None else a.recovered == "yes", a.events)
    elif a.cmd == "torchrun":
        torchrun(a.world)
    else:
        program(a.n)


if __name__ == "__main__":
    main()
