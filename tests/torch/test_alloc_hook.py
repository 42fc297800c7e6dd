#!/usr/bin/env python3
"""gpuprof's PyTorch allocator hook (profiler/python/gpuprof_alloc.cpp),
built by gpuprof_build.py as for a real torch but against a stand-in of
torch's C++ allocator (tests/torch/fake_torch/: its header, and a libc10_cuda
that makes trace entries and counters in PyTorch's order), with the
recorder's entry points replaced by a sink that writes each event as a line.

Checked: the build (cache, name, reuse), attach refused before CUDA is up
and for another backend, the ATTACH events (a device's at attach where it held
memory, else with its first event; none for a device never used), every block's size read from
the counters (whatever the request was, deferred frees, two devices), the
resolver thread for an allocation nothing follows, the exit handler for one
the program ends on, a guessed size when the counters moved unseen, OOM's
sizes as PyTorch's message gives them, segments, entries left out, a refused
event counted, and with stacks each block's Python stack (file, line),
and for a thread without Python frames during backward() its caller's
(without --stacks: for every block made during backward()).

Needs a C and a C++ compiler; skipped (77) without them. Run with the hooks'
build directory (build/profiler/python) on PYTHONPATH."""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_torch")
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MiB = 1 << 20
fails = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        fails.append(what)


def line_of(tag):
    for i, ln in enumerate(open(os.path.abspath(__file__), encoding="utf-8"), 1):
        if ln.rstrip().endswith("# " + tag):
            return str(i)
    raise KeyError(tag)


def setup(work):
    """A fake torch under work/torch, CUDA headers under work/cuda, the sink;
    returns (fake torch module, sink path)."""
    cxx = os.environ.get("CXX") or "c++"
    cc = os.environ.get("CC") or "cc"
    if not shutil.which(cxx.split()[0]) or not shutil.which(cc.split()[0]):
        print("SKIP: no C/C++ compiler (%s, %s)" % (cc, cxx))
        sys.exit(77)
    tdir = os.path.join(work, "torch")
    shutil.copytree(os.path.join(FAKE, "include"), os.path.join(tdir, "include"))
    os.makedirs(os.path.join(work, "cuda", "include"))
    shutil.copy(os.path.join(FAKE, "cuda", "cuda_runtime_api.h"), os.path.join(work, "cuda", "include"))
    lib = os.path.join(tdir, "lib")
    os.makedirs(lib)
    inc = ["-I" + os.path.join(tdir, "include"), "-I" + os.path.join(work, "cuda", "include")]
    subprocess.run(cxx.split() + ["-shared", "-fPIC", "-std=c++17"] + inc +
                   [os.path.join(FAKE, "fake_c10_cuda.cpp"), "-o", os.path.join(lib, "libc10_cuda.so")],
                   check=True)
    open(os.path.join(work, "empty.c"), "w").close()
    subprocess.run(cc.split() + ["-shared", "-fPIC", os.path.join(work, "empty.c"), "-o",
                                 os.path.join(lib, "libc10.so")], check=True)
    sink = os.path.join(work, "sink.so")
    subprocess.run(cc.split() + ["-shared", "-fPIC", "-I" + os.path.join(ROOT, "profiler"),
                                 os.path.join(FAKE, "sink.c"), "-o", sink], check=True)
    torch = types.SimpleNamespace(__file__=os.path.join(tdir, "__init__.py"), __version__="2.11.0+fake",
                                  _C=types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True))
    return torch, sink


def events(path):
    out = []
    if not os.path.exists(path):
        return out
    for ln in open(path, encoding="utf-8", errors="replace"):
        kind, rest = ln.rstrip("\n").split(" ", 1)
        if kind == "event":
            out.append({k: int(v) for k, v in (f.split("=") for f in rest.split())})
        else:
            head = rest.split(" ", 2)
            out.append({"stack": int(head[0][3:]), "frames": head[2]})
    return out


def blocks(evs, type_):
    return [e for e in evs if e.get("type") == type_]


ALLOC, FREE, SEG_ALLOC, SEG_FREE, SEG_MAP, SEG_UNMAP, OOM, ATTACH = range(1, 9)


def child(build_dir):
    """At exit: an allocation nothing follows is written by the hook's exit
    handler (after Python is gone: the sink is C)."""
    sys.path.insert(0, build_dir)
    import gpuprof_build
    torch = types.SimpleNamespace(**{k: v for k, v in (a.split("=", 1) for a in sys.argv[3:])})
    torch._C = types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True)
    hook = ctypes.CDLL(gpuprof_build.library(torch))
    fake = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libc10_cuda.so"))
    sink = ctypes.CDLL(os.environ["GPUPROF_TEST_SINK_LIB"])
    sink.sink_event_fn.restype = sink.sink_stack_fn.restype = sink.sink_in_module_fn.restype = ctypes.c_void_p
    fake.fake_init(1)
    why = ctypes.create_string_buffer(256)
    rc = hook.gpuprof_alloc_attach(ctypes.c_void_p(sink.sink_event_fn()), ctypes.c_void_p(sink.sink_stack_fn()),
                                   ctypes.c_void_p(sink.sink_in_module_fn()), 0, why, 256)
    sz = ctypes.c_size_t

    def alloc(addr, on_thread=False):
        (fake.fake_alloc_on_thread if on_thread else fake.fake_alloc)(0, sz(addr), sz(512), sz(512))  # L_ALLOC
    # without --stacks: a block no module names has its line
    alloc(0x8000)
    sink.sink_set_in_module(1)
    alloc(0x8200)  # a module names it: no stack read
    token = hook.gpuprof_alloc_backward_begin()  # L_BW0
    alloc(0x8400)  # during backward(), none of its own: backward()'s
    sink.sink_set_in_module(0)
    alloc(0x8600, on_thread=True)  # the autograd engine's thread: backward()'s
    hook.gpuprof_alloc_backward_end(token)
    alloc(0x8800, on_thread=True)  # no Python frames, no backward(): none
    fake.fake_alloc(0, sz(0x9000), sz(700), sz(1024))  # L_EXIT
    sys.exit(rc)  # at once: the resolver thread has not looked yet


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    import gpuprof_build
    work = tempfile.mkdtemp(prefix="gpuprof-hook-")
    try:
        torch, sink_path = setup(work)
        env = dict(os.environ, GPUPROF_CACHE=os.path.join(work, "cache"),
                   CUDA_HOME=os.path.join(work, "cuda"))
        os.environ.update(env)
        said = []
        path = gpuprof_build.library(torch, said.append, env)
        check(os.path.isfile(path) and path.startswith(env["GPUPROF_CACHE"]) and len(said) == 1,
              "built into the cache, said once: %s" % said)
        check(gpuprof_build.library(torch, said.append, env) == path and len(said) == 1,
              "found again, not rebuilt")
        other = types.SimpleNamespace(**dict(vars(torch), __version__="2.12.0+fake"))
        check(gpuprof_build.plan(other, env)["library"] != path, "another torch: another library")
        check(not [f for f in os.listdir(env["GPUPROF_CACHE"]) if f.startswith("tmp")], "no leftovers")
        stacks_ok = gpuprof_build.plan(torch, env)["stacks"]

        hook = ctypes.CDLL(path)
        hook.gpuprof_alloc_attach.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                              ctypes.c_char_p, ctypes.c_size_t]
        hook.gpuprof_alloc_count.restype = ctypes.c_uint64
        hook.gpuprof_alloc_backward_begin.restype = ctypes.c_uint32
        hook.gpuprof_alloc_backward_end.argtypes = [ctypes.c_uint32]
        fake = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libc10_cuda.so"))
        for fn in ("fake_alloc", "fake_alloc_on_thread", "fake_free", "fake_complete", "fake_segment", "fake_oom"):
            getattr(fake, fn).argtypes = {
                "fake_alloc": [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t],
                "fake_alloc_on_thread": [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t],
                "fake_free": [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int],
                "fake_complete": [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t],
                "fake_segment": [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_int],
                "fake_oom": [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t]}[fn]
        fake.fake_bump_active.argtypes = [ctypes.c_int, ctypes.c_int64]
        sink = ctypes.CDLL(sink_path)
        sink.sink_event_fn.restype = sink.sink_stack_fn.restype = ctypes.c_void_p
        ev_fn, st_fn = ctypes.c_void_p(sink.sink_event_fn()), ctypes.c_void_p(sink.sink_stack_fn())
        out = os.path.join(work, "events.txt")
        os.environ["GPUPROF_TEST_SINK"] = out
        why = ctypes.create_string_buffer(256)

        rc = hook.gpuprof_alloc_attach(ev_fn, st_fn, None, 1, why, 256)
        check(rc == -11 and b"not initialised" in why.value, "refused before CUDA is up: %d %s" % (rc, why.value))
        fake.fake_init(3)  # device 2: never used
        fake.fake_backend(b"cudaMallocAsync")
        rc = hook.gpuprof_alloc_attach(ev_fn, st_fn, None, 1, why, 256)
        check(rc == -95 and b"cudaMallocAsync" in why.value, "refused for another backend: %s" % why.value)
        fake.fake_backend(b"native")
        # PyTorch had made some before: ATTACH says it
        fake.fake_segment(1, 0x7000000, 2 * MiB, 0, 0)
        rc = hook.gpuprof_alloc_attach(ev_fn, st_fn, None, int(stacks_ok), why, 256)
        check(rc == 0, "attached: %d %s" % (rc, why.value))
        rc2 = hook.gpuprof_alloc_attach(ev_fn, st_fn, None, 0, why, 256)
        check(rc2 == -22, "attached once only")

        fake.fake_segment(0, 0x1000000, 20 * MiB, 0, 0)
        fake.fake_alloc(0, 0x1000000, 1000, 1024)  # L_A
        fake.fake_alloc(0, 0x1000400, 3 * MiB, 3 * MiB + 1024 * 512)  # a whole free block
        fake.fake_alloc(1, 0x7000000, 512, 512)  # another device: its own order
        fake.fake_free(0, 0x1000000, 1000, 1024, 0)
        fake.fake_free(0, 0x1000400, 3 * MiB, 3 * MiB + 1024 * 512, 1)  # waits for a stream
        fake.fake_alloc(0, 0x1000000, 10, 512)
        fake.fake_complete(0, 0x1000400, 3 * MiB, 3 * MiB + 1024 * 512)
        fake.fake_other(0, 0)  # a snapshot: resolves, not written
        fake.fake_other(0, 1)  # an annotation: ignored
        fake.fake_alloc(0, 0x1000200, 100, 512)
        time.sleep(0.4)  # nothing follows: the resolver thread writes it
        fake.fake_alloc(0, 0x1000600, 600, 1024)
        fake.fake_bump_active(0, 7)  # unseen: the size cannot be read
        fake.fake_oom(0, 123456, 30 * MiB + 1)
        fake.fake_oom(0, 1, 500 * 1024)
        fake.fake_oom(0, 1, 5 * MiB)
        fake.fake_segment(0, 0x3000000, 20 * MiB, 0, 1)
        fake.fake_segment(0, 0x3000000, 20 * MiB, 1, 1)
        fake.fake_segment(0, 0x1000000, 20 * MiB, 1, 0)
        time.sleep(0.3)
        evs = [e for e in events(out) if "type" in e]
        al = blocks(evs, ALLOC)
        al0 = [e for e in al if e["device"] == 0]
        sizes = [(e["addr"], e["requested"], e["bytes"]) for e in al0]
        check(sizes == [(0x1000000, 1000, 1024), (0x1000400, 3 * MiB, 3 * MiB + 1024 * 512),
                        (0x1000000, 10, 512), (0x1000200, 100, 512), (0x1000600, 600, 1024)],
              "every block's size from the counters, in order: %r" % (sizes,))
        check([e["flags"] for e in al0] == [0, 0, 0, 0, 1], "the last one guessed (flag)")
        al1 = [(e["addr"], e["bytes"]) for e in al if e["device"] == 1]
        check(al1 == [(0x7000000, 512)], "the other device's, by itself: %r" % (al1,))
        check(all(e["version"] == 1 and e["tid"] > 0 and (e["stream"] == 0x5000) == (e["type"] != ATTACH)
                  for e in evs), "version, thread and stream on every event")
        ts = [e["ts"] for e in evs if e["device"] == 0]
        check(ts == sorted(ts), "one device's events in time order")
        fr = blocks(evs, FREE)
        check([(e["addr"], e["requested"], e["bytes"]) for e in fr] ==
              [(0x1000000, 1000, 0), (0x1000400, 3 * MiB, 0)], "frees: when requested, no size")
        # an ATTACH for each device used: device 1 held memory when the hook
        # was attached, device 0 is announced with its first event, device 2
        # was never used and has none
        at = blocks(evs, ATTACH)
        check([(e["device"], e["allocated"], e["reserved"], e["stack"]) for e in at] ==
              [(1, 0, 2 * MiB, int(stacks_ok)), (0, 0, 0, int(stacks_ok))], "ATTACH of each device used %r" % (at,))
        first0 = [e for e in evs if e["device"] == 0][:2]
        check([e["type"] for e in first0] == [ATTACH, SEG_ALLOC] and first0[0]["ts"] == first0[1]["ts"],
              "device 0's ATTACH just before its first event: %r" % (first0,))
        oom = blocks(evs, OOM)
        check([(e["bytes"], e["requested"]) for e in oom] ==
              [(32 * MiB, 30 * MiB + 1), (2 * MiB, 500 * 1024), (20 * MiB, 5 * MiB)],
              "OOM: what PyTorch tried to cudaMalloc")
        check(oom[0]["free"] == 123456 and oom[0]["allocated"] == 512 + 512 + 1024 and
              oom[0]["reserved"] == 20 * MiB, "OOM: free, allocated, reserved then")
        seg = [(e["type"], e["addr"], e["bytes"]) for e in evs if SEG_ALLOC <= e["type"] <= SEG_UNMAP]
        check(seg == [(SEG_ALLOC, 0x1000000, 20 * MiB), (SEG_MAP, 0x3000000, 20 * MiB),
                      (SEG_UNMAP, 0x3000000, 20 * MiB), (SEG_FREE, 0x1000000, 20 * MiB)], "segments %r" % (seg,))
        check(hook.gpuprof_alloc_count(1) == 1 and hook.gpuprof_alloc_count(0) == 0, "counts: 1 guessed")
        if stacks_ok:
            st = {e["stack"]: e["frames"] for e in events(out) if "frames" in e}
            first = st.get(al[0]["stack"], "")
            check(first.startswith("%s|%s|main;" % (os.path.abspath(__file__), line_of("L_A"))),
                  "a block's stack: the line that allocated it (%s)" % first[:120])
            check(all(e["stack"] for e in al), "every block of a Python thread has its stack")
            # backward: the autograd engine's threads run no Python code; their
            # blocks take the stack of the thread in backward() meanwhile
            fake.fake_alloc_on_thread(0, 0x2000000, 512, 512)
            token = hook.gpuprof_alloc_backward_begin()  # L_BW
            fake.fake_alloc_on_thread(0, 0x2000200, 512, 512)
            inner = hook.gpuprof_alloc_backward_begin()  # backward within backward
            hook.gpuprof_alloc_backward_end(inner)
            fake.fake_alloc_on_thread(0, 0x2000400, 512, 512)
            hook.gpuprof_alloc_backward_end(token)
            fake.fake_alloc_on_thread(0, 0x2000600, 512, 512)
            fake.fake_other(0, 0)
            evs = events(out)
            st = {e["stack"]: e["frames"] for e in evs if "frames" in e}
            bw = {e["addr"]: st.get(e["stack"], "") if e["stack"] else None
                  for e in blocks([e for e in evs if "type" in e], ALLOC) if e["addr"] >= 0x2000000}
            want = "%s|%s|main;" % (os.path.abspath(__file__), line_of("L_BW"))
            check(bw[0x2000000] is None and bw[0x2000600] is None,
                  "a thread without Python frames, no backward running: no stack")
            check(bw[0x2000200].startswith(want) and bw[0x2000400].startswith(want),
                  "during backward, such a thread's blocks: backward's caller's line (%s)" %
                  (bw[0x2000200] or "")[:120])
        else:
            print("note: stacks not tried (this Python's headers)")
        sink.sink_refuse(1)
        fake.fake_alloc(0, 0x1000800, 10, 512)
        fake.fake_alloc(0, 0x1000a00, 10, 512)
        sink.sink_refuse(0)
        check(hook.gpuprof_alloc_count(0) == 1, "an event the recorder refused is counted")

        # the exit handler writes what was held back
        out2 = os.path.join(work, "exit.txt")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                            os.path.dirname(gpuprof_build.__file__), "__file__=" + torch.__file__,
                            "__version__=" + torch.__version__],
                           env=dict(env, GPUPROF_TEST_SINK=out2, GPUPROF_TEST_SINK_LIB=sink_path))
        ex = blocks(events(out2), ALLOC)
        check(r.returncode == 0 and [(e["addr"], e["bytes"]) for e in ex][-1:] == [(0x9000, 1024)],
              "the last allocation, written at exit: %r" % (ex,))
        if stacks_ok:
            st = {e["stack"]: e["frames"] for e in events(out2) if "frames" in e}
            got = [(e["addr"], st[e["stack"]].split(";")[0] if e["stack"] else None) for e in ex]
            me = os.path.abspath(__file__)

            def at(tag, fn="child"):
                return "%s|%s|%s" % (me, line_of(tag), fn)
            check(got == [(0x8000, at("L_ALLOC", "child.<locals>.alloc")), (0x8200, None), (0x8400, at("L_BW0")),
                          (0x8600, at("L_BW0")), (0x8800, None), (0x9000, at("L_EXIT"))],
                  "without --stacks: a stack where no module names a block, backward()'s caller's "
                  "for the rest made during it: %r" % (got,))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fails:
        print("%d failed" % len(fails))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
