"""gpuprof's PEP 517 build backend: what `pip install .` runs.

It builds with the project's own CMake (configure, build, `cmake --install`
into a staging directory) and writes the wheel itself, with the standard
library alone, so that a build needs nothing from a package index: the
machines gpuprof is built on often reach none (a GPU node without network).

The wheel holds the install tree, unchanged, in its data scheme
(gpuprof-VERSION.data/data/): pip puts it under the environment's prefix,
bin/gpuprof beside lib/gpuprof/ (the recorder, libgpuprof_inject.so, and
the PyTorch hooks in python/), as `cmake --install` does, and the installed
gpuprof finds them relative to itself as it does there. json-c is linked
from its static archive (GPUPROF_STATIC_JSONC) so that the command needs no
json-c where it is installed; for the same reason it leaves ISA-L out
(GPUPROF_ISAL=OFF: Debian has no static archive of it). Without the CUDA Toolkit (or with
GPUPROF_RECORDER=OFF) the wheel holds the answer side alone, and the build
says so.

Settings (pip install . -C KEY=VALUE, or --config-settings KEY=VALUE):
  cmake.define.NAME=VALUE   -DNAME=VALUE for the configure (repeatable names)
  cmake.args=ARGS           more configure arguments, split as a shell does
  cmake.build-type=TYPE     CMAKE_BUILD_TYPE (default Release)
  build-dir=DIR             build there and keep it (default: a temporary one)
The environment variable GPUPROF_CMAKE_ARGS adds configure arguments too
(for a pip without -C); CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs.
"""
import base64
import csv
import gzip
import hashlib
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The same tree gives the same source archive: its entries get this time.
_EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, a zip's first
_SETTINGS = ("cmake.define.", "cmake.args", "cmake.build-type", "build-dir")


class BuildError(Exception):
    """A reason the build cannot go on, said in one line."""


def _say(msg):
    # pip shows a backend's output with -v, or when the build fails
    print("gpuprof: " + msg, file=sys.stderr, flush=True)


def _project():
    """name, version, summary, requires-python: the version is CMake's
    (project(gpuprof VERSION ...)), the rest pyproject.toml's [project]."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"^project\(\s*(\w+)\s+VERSION\s+([0-9][0-9.]*)", f.read(), re.M)
    if not m:
        raise BuildError("CMakeLists.txt: no project(NAME VERSION X.Y.Z)")
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib  # Python >= 3.11

        table = tomllib.loads(text).get("project", {})
    except ImportError:
        # older Pythons: the plain `key = "string"` lines of [project]
        section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
        table = dict(re.findall(r'^([\w-]+)\s*=\s*"([^"\n]*)"', section.group(1) if section else "", re.M))
    if table.get("name", m.group(1)) != m.group(1):
        raise BuildError("pyproject.toml names %r, CMakeLists.txt %r" % (table.get("name"), m.group(1)))
    return {
        "name": m.group(1),
        "version": m.group(2),
        "summary": table.get("description", ""),
        "requires_python": table.get("requires-python", ""),
    }


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"]]
    if p["summary"]:
        lines.append("Summary: " + p["summary"])
    if p["requires_python"]:
        lines.append("Requires-Python: " + p["requires_python"])
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("\n".join(lines) + "\n\n" + readme).encode("utf-8")


def _dist_info(p):
    return "%s-%s.dist-info" % (p["name"], p["version"])


def _settings(config_settings):
    """config_settings as lists of values, unknown keys refused."""
    out = {}
    for key, value in (config_settings or {}).items():
        if not any(key == k or (k.endswith(".") and key.startswith(k)) for k in _SETTINGS):
            raise BuildError("unknown setting %r (known: %s)" % (key, ", ".join(
                k + "NAME" if k.endswith(".") else k for k in _SETTINGS)))
        out[key] = value if isinstance(value, list) else [value]
    return out


def _cmake_args(settings):
    build_type = settings.get("cmake.build-type", ["Release"])[-1]
    args = [
        "-DCMAKE_BUILD_TYPE=" + build_type,
        "-DBUILD_TESTING=OFF",
        "-DGPUPROF_BUILD_SAMPLES=OFF",
        "-DGPUPROF_STATIC_JSONC=ON",
        # ISA-L has no static archive in Debian: zlib alone, as for json-c,
        # nothing beside the wheel to install where it runs
        "-DGPUPROF_ISAL=OFF",
        # pip deletes the build tree: the recorder is the installed one
        "-DGPUPROF_INSTALLED_ONLY=ON",
        # bin/ and lib/ under the prefix, as the wheel's data scheme lays them
        "-DCMAKE_INSTALL_BINDIR=bin",
        "-DCMAKE_INSTALL_LIBDIR=lib",
        # the hooks' compiled module for the Python that installs gpuprof
        "-DPython3_EXECUTABLE=" + sys.executable,
    ]
    for key, values in sorted(settings.items()):
        if key.startswith("cmake.define."):
            args += ["-D%s=%s" % (key[len("cmake.define."):], v) for v in values]
    for v in settings.get("cmake.args", []):
        args += shlex.split(v)
    args += shlex.split(os.environ.get("GPUPROF_CMAKE_ARGS", ""))
    return args


def _run(cmd, env=None):
    _say("running: " + " ".join(shlex.quote(c) for c in cmd))
    # CMake's output on stderr too: a PEP 517 frontend may read stdout
    rc = subprocess.call(cmd, stdout=sys.stderr.fileno(), env=env)
    if rc != 0:
        raise BuildError("%s exited %d" % (os.path.basename(cmd[0]), rc))


def _outside_env():
    """The environment without what pip's isolated build adds for Python
    (PYTHONPATH to its own packages, PYTHONNOUSERSITE): a cmake that pip
    installed into a virtual environment is a Python script importing its
    own package, which that isolation hides."""
    env = dict(os.environ)
    for k in ("PYTHONPATH", "PYTHONNOUSERSITE"):
        env.pop(k, None)
    return env


def _runs(cmake, env):
    try:
        return subprocess.run([cmake, "--version"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _find_cmake():
    """The first cmake on PATH that runs, as it is or outside pip's
    isolation for Python (_outside_env): (its path, the environment to run
    it in; None: this one)."""
    seen = set()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        cand = shutil.which("cmake", path=d or ".")
        if not cand or os.path.realpath(cand) in seen:
            continue
        seen.add(os.path.realpath(cand))
        if _runs(cand, None):
            return cand, None
        env = _outside_env()
        if env != dict(os.environ) and _runs(cand, env):
            _say("%s runs outside pip's isolated Python environment: run so" % cand)
            return cand, env
        _say("%s does not run here; looking further along PATH" % cand)
    raise BuildError("no cmake on PATH that runs: gpuprof builds with CMake >= 3.24 "
                     "(Debian, Ubuntu: apt-get install cmake)")


def _build_and_stage(settings, build_dir, stage):
    cmake, env = _find_cmake()
    _run([cmake, "-S", ROOT, "-B", build_dir] + _cmake_args(settings), env)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run([cmake, "--build", build_dir, "--parallel", jobs], env)
    _run([cmake, "--install", build_dir, "--prefix", stage], env)


def _tag(stage):
    """The wheel's tag: the platform it was built for; CPython's version and
    ABI too when it holds a module compiled for them (the hooks' call)."""
    plat = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    soabi = sysconfig.get_config_var("SOABI") or ""
    compiled = any(n.endswith(suffix) and suffix != ".so" for _, _, names in os.walk(stage) for n in names)
    if compiled and sys.implementation.name == "cpython" and soabi.startswith("cpython-"):
        py = "cp%d%d" % sys.version_info[:2]
        return "%s-cp%s-%s" % (py, soabi.split("-")[1], plat)
    return "py3-none-" + plat


def _hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "sha256=" + digest


def _zip_add(zf, arcname, data, mode=0o644):
    info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def _write_wheel(p, stage, wheel_directory):
    tag = _tag(stage)
    name = "%s-%s-%s.whl" % (p["name"], p["version"], tag)
    data_dir = "%s-%s.data/data/" % (p["name"], p["version"])
    dist_info = _dist_info(p)
    record = []
    files = []
    for top, dirs, names in os.walk(stage):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(top, n)
            rel = os.path.relpath(path, stage).replace(os.sep, "/")
            # a wheel holds no links: a linked file goes in as itself
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                raise BuildError("the install tree holds %s, not a file" % rel)
            files.append((data_dir + rel, path, 0o755 if st.st_mode & 0o111 else 0o644))
    wheel = ("Wheel-Version: 1.0\nGenerator: gpuprof_pep517\nRoot-Is-Purelib: false\n"
             "Tag: %s\n" % tag).encode()
    out = os.path.join(wheel_directory, name)
    tmp = out + ".part"
    with zipfile.ZipFile(tmp, "w") as zf:
        for arcname, path, mode in files:
            with open(path, "rb") as f:
                data = f.read()
            _zip_add(zf, arcname, data, mode)
            record.append((arcname, _hash(data), str(len(data))))
        for n, data in (("METADATA", _metadata(p)), ("WHEEL", wheel)):
            _zip_add(zf, dist_info + "/" + n, data)
            record.append((dist_info + "/" + n, _hash(data), str(len(data))))
        record.append((dist_info + "/RECORD", "", ""))
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(record)
        _zip_add(zf, dist_info + "/RECORD", buf.getvalue().encode())
    os.replace(tmp, out)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    d = os.path.join(metadata_directory, _dist_info(p))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "wb") as f:
        f.write(_metadata(p))
    return _dist_info(p)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    try:
        p = _project()
        settings = _settings(config_settings)
        keep = settings.get("build-dir", [None])[-1]
        build_dir = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="gpuprof-build-")
        stage = tempfile.mkdtemp(prefix="gpuprof-stage-")
        try:
            _build_and_stage(settings, build_dir, stage)
            recorder = os.path.isfile(os.path.join(stage, "lib", "gpuprof", "libgpuprof_inject.so"))
            name = _write_wheel(p, stage, wheel_directory)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
            if not keep:
                shutil.rmtree(build_dir, ignore_errors=True)
    except BuildError as e:
        _say("cannot build the wheel: %s" % e)
        raise SystemExit(1)
    if recorder:
        _say("%s: gpuprof, its recorder (lib/gpuprof/libgpuprof_inject.so) and the PyTorch hooks" % name)
    else:
        _say("%s: WITHOUT the recorder (no CUDA Toolkit found, or GPUPROF_RECORDER=OFF): "
             "the answer side alone (analyze, report, compare, check, merge, recover); "
             "gpuprof --trace cannot record" % name)
    return name


def _source_files():
    """The files of the source tree: git's (tracked, and new ones it does
    not ignore) where it is a checkout's top, else every file but builds
    and caches (a copy inside another checkout is no checkout of its own)."""
    try:
        top = subprocess.run(["git", "-C", ROOT, "rev-parse", "--show-toplevel"],
                             capture_output=True, check=True).stdout.decode().strip()
        if os.path.realpath(top) == os.path.realpath(ROOT):
            out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                                  "--exclude-standard"], capture_output=True, check=True).stdout
            names = sorted(set(n for n in out.decode().split("\0") if n))
            return [n for n in names if os.path.isfile(os.path.join(ROOT, n))]
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__")
                         and not (top == ROOT and (d.startswith("build") or d in (".deps", ".gpu", ".whl"))))
        names += [os.path.relpath(os.path.join(top, f), ROOT).replace(os.sep, "/")
                  for f in files if not f.endswith(".pyc")]
    # an unpacked source archive's PKG-INFO is written anew
    return sorted(n for n in names if n != "PKG-INFO")


def build_sdist(sdist_directory, config_settings=None):
    try:
        p = _project()
        _settings(config_settings)
    except BuildError as e:
        _say("cannot build the source archive: %s" % e)
        raise SystemExit(1)
    base = "%s-%s" % (p["name"], p["version"])
    name = base + ".tar.gz"
    out = os.path.join(sdist_directory, name)
    tmp = out + ".part"

    def entry(arcname, size, mode):
        info = tarfile.TarInfo(base + "/" + arcname)
        info.size, info.mode, info.mtime = size, mode, _EPOCH
        info.uname = info.gname = "root"
        return info

    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=_EPOCH) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for rel in _source_files():
            path = os.path.join(ROOT, rel)
            with open(path, "rb") as f:
                data = f.read()
            mode = 0o755 if os.stat(path).st_mode & 0o111 else 0o644
            tf.addfile(entry(rel, len(data), mode), io.BytesIO(data))
        pkg_info = _metadata(p)
        tf.addfile(entry("PKG-INFO", len(pkg_info), 0o644), io.BytesIO(pkg_info))
    os.replace(tmp, out)
    return name
