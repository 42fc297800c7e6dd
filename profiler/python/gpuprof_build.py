"""Builds gpuprof's PyTorch allocator hook (gpuprof_alloc.cpp with
gpuprof_stacks.c) for the torch and Python that run the program, once, into
a cache; the PyTorch hooks load it in native mode (gpuprof_torch.py).

Why at run time: the hook reads c10::cuda::CUDACachingAllocator's
TraceEntry, a C++ struct of each torch version, so it must be compiled
against the torch the program imports, as torch.utils.cpp_extension
compiles extensions. The library's name holds a digest of everything it
depends on (sources, torch version and ABI, Python, compiler), so a new
torch gets a new build and an old one is never loaded by mistake.

Needs a C and a C++ compiler (CC, CXX; default cc, c++), torch's C++
headers (in every torch wheel), CUDA's runtime headers (CUDA_HOME, the
nvidia-cuda-runtime wheel, or /usr/local/cuda) and, for --stacks, Python's
headers. Where: GPUPROF_CACHE, else $XDG_CACHE_HOME/gpuprof, else
~/.cache/gpuprof. Concurrent builds (the ranks of one job) take turns on a
lock file; the library appears by an atomic rename."""
import fcntl
import glob
import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile

SOURCES = ("gpuprof_alloc.cpp", "gpuprof_stacks.c", "gpuprof_stacks.h", "torch_alloc.h")
NAME = "libgpuprof_alloc"


class BuildError(Exception):
    """The hook could not be built: str(e) says why in one line."""


def here():
    return os.path.dirname(os.path.abspath(__file__))


def cache_dir(env=os.environ):
    d = env.get("GPUPROF_CACHE")
    if d:
        return d
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpuprof")


def cuda_include(torch, env=os.environ):
    """A directory holding cuda_runtime_api.h, or None."""
    cands = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            cands.append(os.path.join(env[var], "include"))
    # pip's CUDA runtime (torch's dependency) ships the headers too
    site = os.path.dirname(os.path.dirname(torch.__file__))
    cands += sorted(glob.glob(os.path.join(site, "nvidia", "cuda_runtime", "include")))
    cands += sorted(glob.glob(os.path.join(site, "nvidia", "cu*", "include")))
    cands += ["/usr/local/cuda/include", "/usr/include"]
    for c in cands:
        if os.path.isfile(os.path.join(c, "cuda_runtime_api.h")):
            return c
    return None


def python_include():
    inc = sysconfig.get_paths().get("include") or ""
    return inc if os.path.isfile(os.path.join(inc, "Python.h")) else None


def _compilers(env):
    return (shlex.split(env.get("CC") or "cc"), shlex.split(env.get("CXX") or "c++"))


def _version(cmd):
    try:
        return subprocess.run(cmd + ["--version"], capture_output=True, text=True,
                              timeout=30).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        return None


def plan(torch, env=os.environ):
    """What to build and where: a dict with the library's path, the
    commands and what they depend on. Raises BuildError when something it
    needs is missing."""
    src = here()
    missing = [s for s in SOURCES if not os.path.isfile(os.path.join(src, s))]
    if missing:
        raise BuildError("its sources are missing beside the hooks (%s)" % ", ".join(missing))
    tdir = os.path.dirname(torch.__file__)
    tinc = os.path.join(tdir, "include")
    if not os.path.isfile(os.path.join(tinc, "c10", "cuda", "CUDACachingAllocator.h")):
        raise BuildError("this torch has no CUDA C++ headers (%s)" % tinc)
    cinc = cuda_include(torch, env)
    if not cinc:
        raise BuildError("CUDA's runtime headers (cuda_runtime_api.h) were not found: "
                         "set CUDA_HOME")
    cc, cxx = _compilers(env)
    ccv, cxxv = _version(cc), _version(cxx)
    if not ccv or not cxxv:
        raise BuildError("no C/C++ compiler (%s, %s; set CC and CXX)" % (cc[0], cxx[0]))
    pinc = python_include()
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
    digest = hashlib.sha256()
    for s in SOURCES:
        with open(os.path.join(src, s), "rb") as f:
            digest.update(f.read())
    for part in (torch.__version__, str(abi), sys.version, str(pinc), cinc, ccv, cxxv, tdir):
        digest.update(part.encode("utf-8", "replace") + b"\0")
    out = os.path.join(cache_dir(env), "%s-%s.so" % (NAME, digest.hexdigest()[:20]))
    flags = ["-O2", "-fPIC", "-fvisibility=hidden", "-I" + src]
    c_cmd = cc + flags + (["-I" + pinc] if pinc else ["-DGP_STK_NO_PYTHON"]) + [
        "-c", os.path.join(src, "gpuprof_stacks.c")]
    cxx_cmd = cxx + flags + ["-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi, "-I" + tinc,
                             "-I" + cinc, "-c", os.path.join(src, "gpuprof_alloc.cpp")]
    # the objects before the libraries: a linker that drops libraries no
    # object before them needs (--as-needed) keeps these
    link = cxx + ["-shared", "-o", "lib.so", "gpuprof_alloc.o", "gpuprof_stacks.o",
                  "-L" + os.path.join(tdir, "lib"), "-lc10", "-lc10_cuda",
                  "-Wl,-rpath," + os.path.join(tdir, "lib")]
    return {"library": out, "c": c_cmd, "cxx": cxx_cmd, "link": link, "stacks": pinc is not None,
            "torch": torch.__version__}


def _run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        lines = [ln for ln in (r.stderr or r.stdout).splitlines() if "error" in ln] or \
            (r.stderr or r.stdout).splitlines()[-3:]
        raise BuildError("%s failed: %s" % (os.path.basename(cmd[0]), " / ".join(lines[:3])[:400]))


def library(torch, say=None, env=os.environ):
    """The hook's library for this torch: its path, built first if it is not
    in the cache (saying so through say, one line). Raises BuildError."""
    p = plan(torch, env)
    out = p["library"]
    if os.path.isfile(out):
        return out
    d = os.path.dirname(out)
    try:
        os.makedirs(d, exist_ok=True)
        lock = open(os.path.join(d, "build.lock"), "a")
    except OSError as e:
        raise BuildError("cannot write its cache %s (%s); set GPUPROF_CACHE" % (d, e.strerror))
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(out):  # another process built it meanwhile
            return out
        if say:
            say("building the PyTorch allocator hook for torch %s, once (into %s)" % (p["torch"], d))
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            _run(p["c"], tmp)
            _run(p["cxx"], tmp)
            _run(p["link"], tmp)
            os.replace(os.path.join(tmp, "lib.so"), out)
    return out


if __name__ == "__main__":
    # python3 gpuprof_build.py: builds (or finds) the hook for this Python's torch
    import torch as _torch
    try:
        print(library(_torch, say=lambda m: print("gpuprof: " + m, file=sys.stderr)))
    except BuildError as e:
        print("gpuprof: the PyTorch allocator hook cannot be built: %s" % e, file=sys.stderr)
        sys.exit(1)
