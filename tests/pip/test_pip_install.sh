#!/usr/bin/env bash
# `pip install .` end to end, offline (pyproject.toml, .pip/gpuprof_pep517.py):
#  1. the wheel, built by pip with nothing from an index, checked (its name and
#     tag, RECORD's hashes), installed into a fresh virtual environment, whose
#     gpuprof says its version, analyzes a bundled trace (the peak its own
#     events give) and, under --trace, hands the program the environment's
#     recorder and hooks (none from the deleted build tree);
#  2. the source archive (build_sdist), and the wheel pip builds from it with
#     GPUPROF_RECORDER=OFF (--config-settings), as a machine without the CUDA
#     Toolkit builds it: the build says so, the wheel holds no recorder, its
#     gpuprof says so and --trace refuses, analyze still works.
# With a CUDA program as SAMPLE (a machine with a GPU: tests/run_gpu_suite.sh
# passes build/gpu/samples/alloc_sizes), the installed gpuprof also records it
# and analyzes what it recorded.
#
#   tests/pip/test_pip_install.sh [PYTHON [SAMPLE]]    (PYTHON: python3)
# Exit 0: passed; 1: failed; 77: skipped (PYTHON has no venv module or pip:
# Debian's python3-venv and python3-pip).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${1:-python3}
sample=${2:-}
trace=$root/samples/traces/alloc_sizes.h100.json.gz
fail() { echo "FAIL: test_pip_install: $*" >&2; exit 1; }

if ! "$py" -c 'import venv, ensurepip' 2>/dev/null || ! "$py" -m pip --version >/dev/null 2>&1; then
	echo "SKIP: test_pip_install: $py has no venv module or no pip (Debian: python3-venv, python3-pip)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# nothing from the network: no index, no pip version check
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
version=$(sed -n 's/^project(gpuprof VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || fail "no version in CMakeLists.txt"

# check_wheel WHEEL recorder|no-recorder: its name, tag, files and RECORD
check_wheel() {
	"$py" - "$1" "$2" "$version" <<'EOF' || fail "$1: see above"
import base64, csv, hashlib, io, os, re, stat, sys, sysconfig, zipfile
path, want, version = sys.argv[1:]
bad = []
name = os.path.basename(path)
plat = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
m = re.fullmatch(r"gpuprof-%s-([^-]+)-([^-]+)-([^-]+)\.whl" % re.escape(version), name)
if not m:
    sys.exit("%s: not gpuprof-%s-TAG.whl" % (name, version))
if m.group(3) != plat:
    bad.append("platform tag %s, not %s" % (m.group(3), plat))
z = zipfile.ZipFile(path)
names = z.namelist()
di = "gpuprof-%s.dist-info/" % version
data = "gpuprof-%s.data/data/" % version
wheel = z.read(di + "WHEEL").decode()
if "Root-Is-Purelib: false" not in wheel or "Tag: %s-%s-%s" % m.groups() not in wheel:
    bad.append("WHEEL: %r" % wheel)
if "Version: %s" % version not in z.read(di + "METADATA").decode():
    bad.append("METADATA has no Version: %s" % version)
rows = list(csv.reader(io.StringIO(z.read(di + "RECORD").decode())))
listed = {r[0] for r in rows}
if sorted(listed) != sorted(names) or len(rows) != len(names):
    bad.append("RECORD lists %s, the wheel holds %s" % (sorted(listed), sorted(names)))
for f, h, size in rows:
    if f == di + "RECORD":
        if h or size:
            bad.append("RECORD's own row has a hash")
        continue
    b = z.read(f)
    digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
    if h != digest or size != str(len(b)):
        bad.append("RECORD: %s: %s %s, the file: %s %d" % (f, h, size, digest, len(b)))
if not (z.getinfo(data + "bin/gpuprof").external_attr >> 16) & stat.S_IXUSR:
    bad.append("bin/gpuprof is not executable")
recorder = data + "lib/gpuprof/libgpuprof_inject.so" in names
hooks = data + "lib/gpuprof/python/sitecustomize.py" in names
if want == "recorder" and not (recorder and hooks):
    bad.append("no recorder or no hooks under lib/gpuprof/")
if want == "no-recorder" and (recorder or m.group(1, 2) != ("py3", "none")):
    bad.append("the answer side alone: a recorder, or the tag %s-%s" % m.group(1, 2))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# the peak the bundled trace's own events give, against analyze --json's
check_analyze() {
	local gp=$1
	"$gp" analyze "$trace" >"$tmp/analyze.txt" || fail "$gp analyze $trace exited $?"
	grep -q "NVIDIA H100 80GB HBM3" "$tmp/analyze.txt" || fail "analyze's text names no H100"
	"$gp" analyze --json "$trace" >"$tmp/analyze.json" || fail "$gp analyze --json exited $?"
	"$py" - "$root" "$trace" "$tmp/analyze.json" <<'EOF' || fail "analyze --json of $trace: see above"
import gzip, json, sys
sys.path.insert(0, sys.argv[1] + "/exporters")
from trace_format import CAT, EV, F, T
ev = json.load(gzip.open(sys.argv[2], "rt"))
live, cur, peak = {}, 0, 0
for e in sorted((e for e in ev if e.get(T.CAT) == CAT.MEMORY and e[T.NAME] in (EV.ALLOC.name, EV.FREE.name)),
                key=lambda e: e[T.TS]):
    a = e[T.ARGS]
    if e[T.NAME] == EV.ALLOC.name:
        live[a[F.ADDR]] = a[F.BYTES]
        cur += a[F.BYTES]
        peak = max(peak, cur)
    else:
        cur -= live.pop(a[F.ADDR])
doc = json.load(open(sys.argv[3]))
got = [d["peak"]["bytes"] for d in doc["devices"]]
if got != [peak]:
    sys.exit("  peaks %s, the trace's events give %d" % (got, peak))
EOF
}

new_venv() {
	"$py" -m venv "$1" || fail "$py -m venv $1"
	"$1/bin/python" -m pip install -q --no-deps "$2" || fail "pip install $2 into $1"
	[ -x "$1/bin/gpuprof" ] || fail "$2: no bin/gpuprof in $1"
}

cd "$root"
# a setting the backend does not know is refused before anything is built
rc=0
"$py" -c 'import sys; sys.path.insert(0, ".pip"); import gpuprof_pep517 as b; b.build_wheel(sys.argv[1], {"cmake.defines.X": "1"})' \
	"$tmp" 2>"$tmp/unknown.log" || rc=$?
[ $rc = 1 ] && grep -q "^gpuprof: cannot build the wheel: unknown setting 'cmake.defines.X'" "$tmp/unknown.log" ||
	{ cat "$tmp/unknown.log"; fail "an unknown setting: exit $rc"; }
# a Python without tomllib (< 3.11) reads pyproject.toml's [project] the same
"$py" -c 'import sys; sys.path.insert(0, ".pip"); import gpuprof_pep517 as b
with_toml = b._project(); sys.modules["tomllib"] = None
sys.exit(0 if b._project() == with_toml and with_toml["summary"] else "without tomllib: %r, with: %r" % (b._project(), with_toml))' ||
	fail "pyproject.toml's [project] read without tomllib differs"

echo "== pip wheel . (the recorder where CUDA is, else the answer side)"
# GPUPROF_CMAKE_ARGS reaches CMake's configure, last
GPUPROF_CMAKE_ARGS="-DGPUPROF_WERROR=ON" "$py" -m pip wheel -v --no-deps -w "$tmp/wheel" . >"$tmp/wheel.log" 2>&1 ||
	{ rc=$?; tail -40 "$tmp/wheel.log"; fail "pip wheel . exited $rc"; }
grep -q "gpuprof: running: .*cmake -S .* -DGPUPROF_WERROR=ON$" "$tmp/wheel.log" ||
	fail "GPUPROF_CMAKE_ARGS did not reach CMake's configure"
whl=$(ls "$tmp"/wheel/gpuprof-*.whl) || fail "pip wheel . wrote no gpuprof-*.whl"
if grep -q "WITHOUT the recorder" "$tmp/wheel.log"; then
	# no CUDA Toolkit here: the answer side alone, said so
	has=no-recorder
	echo "  no CUDA Toolkit: $(basename "$whl") is the answer side alone"
else
	has=recorder
fi
check_wheel "$whl" "$has"
echo "  $(basename "$whl"): $(stat -c %s "$whl") bytes"
v=$tmp/venv
new_venv "$v" "$whl"
cd "$tmp"
out=$("$v/bin/gpuprof" --version) || fail "gpuprof --version exited $?"
case $has in
recorder) [ "$out" = "gpuprof $version" ] || fail "gpuprof --version: '$out'" ;;
*) [ "$out" = "gpuprof $version (without the recorder: --trace cannot record)" ] || fail "--version: '$out'" ;;
esac
if command -v ldd >/dev/null && ldd "$v/bin/gpuprof" | grep -q json-c; then
	fail "the wheel's gpuprof needs json-c's shared library: $(ldd "$v/bin/gpuprof" | grep json-c)"
fi
check_analyze "$v/bin/gpuprof"

if [ $has = recorder ]; then
	# the program is handed the environment's recorder and hooks
	cat >"$tmp/show_env.py" <<'EOF'
import os, sys
with open(sys.argv[1], "w") as f:
    f.write(os.environ.get("CUDA_INJECTION64_PATH", "") + "\n" + os.environ.get("PYTHONPATH", "") + "\n")
EOF
	"$v/bin/gpuprof" --trace --python "$v/bin/python" -o "$tmp/env.json.gz" "$tmp/show_env.py" "$tmp/env.txt" \
		>"$tmp/trace.log" 2>&1 || { rc=$?; cat "$tmp/trace.log"; fail "gpuprof --trace show_env.py exited $rc"; }
	real=$(cd "$v" && pwd -P)
	[ "$(sed -n 1p "$tmp/env.txt")" = "$real/lib/gpuprof/libgpuprof_inject.so" ] ||
		fail "--trace handed the program the recorder '$(sed -n 1p "$tmp/env.txt")', not the environment's"
	case $(sed -n 2p "$tmp/env.txt") in
	"$real/lib/gpuprof/python" | "$real/lib/gpuprof/python:"*) ;;
	*) fail "--trace's PYTHONPATH is '$(sed -n 2p "$tmp/env.txt")', not the environment's hooks first" ;;
	esac
	# without it, the command looks nowhere else (the build tree is gone)
	mv "$v/lib/gpuprof/libgpuprof_inject.so" "$tmp/recorder.so"
	rc=0
	"$v/bin/gpuprof" --trace -o "$tmp/none.json.gz" -- true >"$tmp/trace.log" 2>&1 || rc=$?
	grep -qF "(looked for $real/bin/../lib/gpuprof/libgpuprof_inject.so)" "$tmp/trace.log" ||
		{ cat "$tmp/trace.log"; fail "no recorder: --trace did not say it looked there alone (exit $rc)"; }
	mv "$tmp/recorder.so" "$v/lib/gpuprof/libgpuprof_inject.so"
	if [ -n "$sample" ]; then
		echo "== the installed gpuprof records $sample"
		"$v/bin/gpuprof" --trace -o "$tmp/sample.json.gz" -- "$sample" >"$tmp/trace.log" 2>&1 ||
			{ rc=$?; cat "$tmp/trace.log"; fail "gpuprof --trace $sample exited $rc"; }
		"$v/bin/gpuprof" analyze "$tmp/sample.json.gz" >"$tmp/sample.txt" ||
			fail "analyze of what the installed gpuprof recorded exited $?"
		grep -q "^GPU 0 of process" "$tmp/sample.txt" || { cat "$tmp/sample.txt"; fail "no GPU recorded"; }
	fi
fi

echo "== the source archive, and its wheel with GPUPROF_RECORDER=OFF"
sdist=$(cd "$root" && "$py" -c 'import sys; sys.path.insert(0, ".pip"); import gpuprof_pep517 as b; print(b.build_sdist(sys.argv[1]))' "$tmp") ||
	fail "build_sdist exited $?"
[ "$sdist" = "gpuprof-$version.tar.gz" ] || fail "build_sdist wrote '$sdist'"
tar tzf "$tmp/$sdist" >"$tmp/sdist.txt"
for f in PKG-INFO pyproject.toml .pip/gpuprof_pep517.py CMakeLists.txt samples/traces/alloc_sizes.h100.json.gz; do
	grep -qx "gpuprof-$version/$f" "$tmp/sdist.txt" || fail "$sdist holds no $f"
done
! grep -q "^gpuprof-$version/build" "$tmp/sdist.txt" || fail "$sdist holds a build directory"
# the archive unpacked inside another checkout (as tests/gpu_snapshot.sh's
# .gpu/src is), no checkout of its own, archives itself to the same bytes
mkdir -p "$tmp/outer/src" "$tmp/outer/again"
tar xzf "$tmp/$sdist" -C "$tmp/outer/src" --strip-components=1
! command -v git >/dev/null || git init -q "$tmp/outer"
(cd "$tmp/outer/src" && "$py" -c 'import sys; sys.path.insert(0, ".pip"); import gpuprof_pep517 as b; b.build_sdist(sys.argv[1])' \
	"$tmp/outer/again") || fail "build_sdist of the unpacked $sdist exited $?"
cmp -s "$tmp/$sdist" "$tmp/outer/again/$sdist" ||
	fail "the unpacked $sdist archived anew differs: $(tar tzf "$tmp/outer/again/$sdist" | wc -l) entries, not $(wc -l <"$tmp/sdist.txt")"
# every setting: a CMake define, more arguments, the build type, a kept build
# tree; and, first on PATH, a cmake that does not run at all (the backend
# goes on along PATH), then one that runs only outside pip's isolated
# Python environment, as a cmake pip installed into a virtual environment
# does (a script importing its own package, hidden by pip's PYTHONPATH):
# the backend runs that one so
mkdir -p "$tmp/broken-cmake" "$tmp/venv-cmake"
printf '#!/bin/sh\nexit 1\n' >"$tmp/broken-cmake/cmake"
real_cmake=$(command -v cmake) || fail "no cmake"
printf '#!/bin/sh\n[ -z "${PYTHONPATH:-}" ] || exit 1\ntouch "%s/venv-cmake/used"\nexec "%s" "$@"\n' \
	"$tmp" "$real_cmake" >"$tmp/venv-cmake/cmake"
chmod +x "$tmp/broken-cmake/cmake" "$tmp/venv-cmake/cmake"
PATH=$tmp/broken-cmake:$tmp/venv-cmake:$PATH "$py" -m pip wheel -v --no-deps -w "$tmp/norec" --config-settings cmake.define.GPUPROF_RECORDER=OFF \
	--config-settings "cmake.args=-DGPUPROF_WERROR=ON" --config-settings cmake.build-type=RelWithDebInfo \
	--config-settings "build-dir=$tmp/norec-build" \
	"$tmp/$sdist" >"$tmp/norec.log" 2>&1 || { rc=$?; tail -40 "$tmp/norec.log"; fail "pip wheel $sdist exited $rc"; }
grep -q "gpuprof: running: .*cmake -S .* -DCMAKE_BUILD_TYPE=RelWithDebInfo .* -DGPUPROF_RECORDER=OFF -DGPUPROF_WERROR=ON$" \
	"$tmp/norec.log" || { grep "gpuprof: running" "$tmp/norec.log"; fail "the settings did not reach CMake's configure"; }
grep -q "gpuprof: $tmp/broken-cmake/cmake does not run here; looking further along PATH" "$tmp/norec.log" ||
	fail "a cmake that does not run, first on PATH: the backend did not pass over it"
grep -q "gpuprof: $tmp/venv-cmake/cmake runs outside pip's isolated Python environment: run so" "$tmp/norec.log" &&
	[ -e "$tmp/venv-cmake/used" ] || fail "a cmake that runs only outside pip's isolation: the backend did not run it so"
grep -qx "CMAKE_BUILD_TYPE:STRING=RelWithDebInfo" "$tmp/norec-build/CMakeCache.txt" ||
	fail "build-dir=$tmp/norec-build: no build tree kept there"
grep -q "gpuprof: gpuprof-$version-py3-none-.*\.whl: WITHOUT the recorder" "$tmp/norec.log" ||
	{ tail -20 "$tmp/norec.log"; fail "GPUPROF_RECORDER=OFF: the build did not say the recorder is left out"; }
whl=$(ls "$tmp"/norec/gpuprof-*.whl) || fail "pip wheel $sdist wrote no gpuprof-*.whl"
check_wheel "$whl" no-recorder
echo "  $(basename "$whl"): $(stat -c %s "$whl") bytes"
v=$tmp/venv-norec
new_venv "$v" "$whl"
out=$("$v/bin/gpuprof" --version) || fail "gpuprof --version exited $?"
[ "$out" = "gpuprof $version (without the recorder: --trace cannot record)" ] ||
	fail "the answer side's gpuprof --version: '$out'"
rc=0
"$v/bin/gpuprof" --trace -- true 2>"$tmp/trace.log" || rc=$?
[ $rc = 2 ] && grep -q "built without the recorder" "$tmp/trace.log" ||
	{ cat "$tmp/trace.log"; fail "the answer side's --trace exited $rc"; }
check_analyze "$v/bin/gpuprof"
echo "PASS: test_pip_install"
