#!/usr/bin/env bash
# `make bench`: known-answer causal-profiling benchmarks (accuracy, overhead, speed) for whatif vs Coz.
# Usage: benchmarks/run.sh BUILD_DIR [bench.py options, e.g. --quick, --reps 5, --workloads lock,pipeline]
# Results go to stdout and bench-out/ (results.txt, results.json, profiles/). Never part of `make test`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
build="${1:?usage: benchmarks/run.sh BUILD_DIR [bench.py options]}"
shift
build="$(cd "$repo" && mkdir -p "$build" && cd "$build" && pwd)"

# The workloads come from the main build (target bench_workloads). If the main tree does not
# configure or build right now, build them on their own so native and Coz figures still come out.
bindir="$build/benchmarks/causal"
if ! cmake --build "$build" --target bench_workloads >/dev/null 2>&1; then
  echo "note: main build of bench_workloads failed; building the workloads standalone" >&2
  bindir="$build/bench-standalone"
  cmake -S "$here/causal" -B "$bindir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$bindir" >/dev/null
fi

if ! command -v coz >/dev/null 2>&1; then
  echo "note: coz not found (Debian package coz-profiler); only native and whatif figures" >&2
fi

# The server benchmark (memcached under memcslap: native, whatif with a source point, with -p patched
# and trapped, Coz). Optional: it says why and goes on when memcached cannot be built;
# WHATIF_BENCH_SERVER=0 leaves it out.
if [[ "${WHATIF_BENCH_SERVER:-1}" != 0 ]]; then
  server=(python3 "$here/server/memcached_bench.py" --build "$build" --out "$repo/bench-out/server")
  if [[ "${WHATIF_BENCH_BOOST:-1}" != 0 && "$(id -u)" == 0 ]] && command -v setsid >/dev/null; then
    server=(setsid --wait "${server[@]}" --boost)
  fi
  "${server[@]}" || echo "note: the server benchmark failed (see above); the causal benchmarks follow" >&2
fi

# On a shared machine the kernel's autogroups share the CPUs between sessions, so `nice` alone does
# not protect the timings. As root, run the harness in a session of its own (its own autogroup)
# whose priority bench.py raises; WHATIF_BENCH_BOOST=0 turns this off.
if [[ "${WHATIF_BENCH_BOOST:-1}" != 0 && "$(id -u)" == 0 ]] && command -v setsid >/dev/null; then
  exec setsid --wait python3 "$here/causal/bench.py" --boost --build "$build" --bindir "$bindir" \
    --out "$repo/bench-out" "$@"
fi
exec python3 "$here/causal/bench.py" --build "$build" --bindir "$bindir" --out "$repo/bench-out" "$@"
