#!/usr/bin/env bash
# Makes .gpu/src, a copy of the last commit (HEAD) plus the carried .deps,
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
echo "gpu snapshot: $(git -C "$root" rev-parse --short HEAD) in .gpu/src"
