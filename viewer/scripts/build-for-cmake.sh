#!/usr/bin/env bash
# Called by the CMake build (viewer/viewer.cmake): installs the viewer's npm packages when the lock file
# is newer than node_modules, then builds the single-file page to $1. A lock serialises concurrent builds.
set -euo pipefail
out=${1:?usage: build-for-cmake.sh OUTPUT.html}
cd "$(dirname "$0")/.."
exec 9>"${TMPDIR:-/tmp}/whatif-viewer-npm.$(id -u).lock"
flock 9
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
node build.mjs --out "$out"
