#!/usr/bin/env bash
# Frequency-estimate accuracy of the stall analysis against callgrind's exact counts (accuracy.py):
# builds micro.c without PIE, counts `micro mix ROUNDS` once under callgrind (the work is fixed, so
# every run executes the same instructions), then profiles it RUNS times with branch records
# (--lbr) and reports each run twice, with the records and without them (the same samples).
# BEFORE_WHATIF=path also analyses each profile with another whatif; ANCHOR_WHATIF=1 adds the
# what-if of anchor_whatif.py (the scale with exact loop trip counts, which the records lack).
# Usage: benchmarks/stalls/accuracy.sh [BUILD_DIR] [RUNS] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
runs=${2:-3}
rounds=${3:-2000}
whatif=$build/launcher/whatif
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_icache.py" "$work/icache_body.h"
gcc -O2 -g -no-pie -I"$work" -o "$work/micro" "$here/micro.c"
valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$work/callgrind.out" "$work/micro" mix "$rounds" >/dev/null 2>&1
for run in $(seq "$runs"); do
  echo "load: $(cat /proc/loadavg)"
  "$whatif" run -q --end-to-end --lbr -o "$work/mix$run.jsonl" --- "$work/micro" mix "$rounds" >/dev/null 2>&1
  python3 "$here/accuracy.py" "$whatif" "$work/mix$run.jsonl" "$work/callgrind.out"
  if [ -n "${ANCHOR_WHATIF:-}" ]; then
    echo "-- what-if: the divide anchor carried to every kernel with exact trip counts (anchor_whatif.py)"
    python3 "$here/anchor_whatif.py" "$whatif" "$work/mix$run.jsonl" "$work/callgrind.out"
  fi
  if [ -n "${BEFORE_WHATIF:-}" ]; then
    echo "-- the same profile analysed by $BEFORE_WHATIF"
    python3 "$here/accuracy.py" "$BEFORE_WHATIF" "$work/mix$run.jsonl" "$work/callgrind.out"
  fi
done
