#!/usr/bin/env bash
# Makes .gpu/src, a copy of the last commit (HEAD) without uncommitted edits,
# and .deps/debs, json-c's Debian packages (fetched here if missing), for
# running the GPU suite on a machine that has no json-c and no network:
# copy .gpu and .deps there, then
#   cd .gpu/src && bash tests/run_gpu_suite.sh ...
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$root/.gpu/src"
mkdir -p "$root/.gpu/src"
git -C "$root" archive HEAD | tar x -C "$root/.gpu/src"
ln -s ../../.deps "$root/.gpu/src/.deps"
# Debian's json-c packages, unpacked there by run_gpu_suite.sh; fetched once
# into .deps/debs.
if ! ls "$root"/.deps/debs/libjson-c5_*.deb "$root"/.deps/debs/libjson-c-dev_*.deb >/dev/null 2>&1; then
	mkdir -p "$root/.deps/debs"
	(cd "$root/.deps/debs" && { apt-get download libjson-c5 libjson-c-dev 2>/dev/null ||
		{ apt-get update -qq && apt-get download libjson-c5 libjson-c-dev; }; }) ||
		{ echo "gpu snapshot: cannot fetch json-c's Debian packages into .deps/debs" >&2; exit 1; }
fi
echo "gpu snapshot: $(git -C "$root" rev-parse --short HEAD) in .gpu/src"
