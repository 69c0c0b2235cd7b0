#!/usr/bin/env bash
# Counters benchmark: CPI of Gregg's three loop shapes (register-bound, cache-resident,
# memory-bound; he measured about 0.34, 1.1 and 8.5) under `whatif stat`, where the machine has a
# hardware PMU; on a machine without one it says so and shows what the software events give.
# Usage: benchmarks/counters/run.sh BUILD_DIR [SECONDS] [REPEATS]. Not part of `make test`.
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [SECONDS] [REPEATS]}
SECONDS_EACH=${2:-2}
REPEATS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
WHATIF=$BUILD/launcher/whatif
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cc -O2 -o "$OUT/cpi_loops" "$HERE/cpi_loops.c"

echo "load average: $(cat /proc/loadavg)"
"$WHATIF" stat -o "$OUT/probe.txt" --- "$OUT/cpi_loops" register 0.1
if grep -q "instructions           not available on this machine" "$OUT/probe.txt"; then
  echo "no PMU: hardware events are not available on this machine:"
  grep "instructions           not available" "$OUT/probe.txt" | sed 's/^ */  /'
  echo "the CPI rows need a machine with a hardware PMU; software events only (utilisation, median of $REPEATS):"
fi

# Interleaved: each repeat runs every shape once, so load changes spread over all of them.
for ((r = 0; r < REPEATS; ++r)); do
  for shape in register cache memory; do
    "$WHATIF" stat -o "$OUT/$shape.$r.txt" --- "$OUT/cpi_loops" "$shape" "$SECONDS_EACH"
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-10s %10s %10s %12s\n' shape CPI util 'gregg CPI'
for shape in register cache memory; do
  cpis=(); utils=()
  for ((r = 0; r < REPEATS; ++r)); do
    cpi=$(awk '/cycles per instruction/ {print $1; exit}' "$OUT/$shape.$r.txt")
    util=$(awk '/CPUs utilised/ {print $1; exit}' "$OUT/$shape.$r.txt")
    cpis+=("${cpi:-n/a}"); utils+=("${util:-n/a}")
  done
  case $shape in register) gregg=0.34 ;; cache) gregg=1.1 ;; memory) gregg=8.5 ;; esac
  printf '%-10s %10s %10s %12s\n' "$shape" "$(median "${cpis[@]}")" "$(median "${utils[@]}")" "$gregg"
done
echo "load average: $(cat /proc/loadavg)"
