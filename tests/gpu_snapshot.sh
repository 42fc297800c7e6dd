#!/usr/bin/env bash
# Makes .gpu/src, a copy of the last commit (HEAD) plus the carried .deps
# (json-c's Debian packages, fetched here if missing),
# for the GPU machine: the device tool copies the working tree, which may
# hold someone's unfinished edits; the suite must test what was committed.
#   bash tests/gpu_snapshot.sh && <device> carry [".deps", ".gpu"]:
#   cd .gpu/src && bash tests/run_gpu_suite.sh ...
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$root/.gpu/src"
mkdir -p "$root/.gpu/src"
git -C "$root" archive HEAD | tar x -C "$root/.gpu/src"
ln -s ../../.deps "$root/.gpu/src/.deps"
# The GPU machine has no json-c and no network: carry Debian's packages
# (unpacked there by run_gpu_suite.sh); fetched once into .deps/debs.
if ! ls "$root"/.deps/debs/libjson-c5_*.deb "$root"/.deps/debs/libjson-c-dev_*.deb >/dev/null 2>&1; then
	mkdir -p "$root/.deps/debs"
	(cd "$root/.deps/debs" && { apt-get download libjson-c5 libjson-c-dev 2>/dev/null ||
		{ apt-get update -qq && apt-get download libjson-c5 libjson-c-dev; }; }) ||
		{ echo "gpu snapshot: cannot fetch json-c's Debian packages into .deps/debs" >&2; exit 1; }
fi
echo "gpu snapshot: $(git -C "$root" rev-parse --short HEAD) in .gpu/src"
