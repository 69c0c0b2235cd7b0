#!/usr/bin/env bash
# Overhead of `whatif run --counters` on a call-heavy program (benchmarks/counters/calls.c), ScALPEL's
# three variants plus two references, in interleaved runs, median wall time of each:
#   vanilla      built without -finstrument-functions, run natively
#   hooks-off    built with -finstrument-functions, under whatif run without --counters (hooks return at once)
#   selective    instrumented, --counters selecting `outer` only (one call in 10101 pays)
#   all          instrumented, --counters selecting main, outer, middle and leaf
#   whatif-only  vanilla build under whatif run (the causal profiler's own cost, for reference)
# Every whatif run uses --fixed-speedup 0 (no virtual-speedup delays). Also prints the calibrated
# accuracy check: the per-call exclusive time of each function in the `all` run.
# Usage: benchmarks/counters/overhead.sh BUILD_DIR [ROUNDS] [REPEATS]. Not part of `make test`.
set -euo pipefail
BUILD=${1:?usage: overhead.sh BUILD_DIR [ROUNDS] [REPEATS]}
ROUNDS=${2:-200}
REPEATS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
WHATIF=$BUILD/launcher/whatif
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cc -O2 -g -o "$OUT/vanilla" "$HERE/calls.c"
cc -O2 -g -finstrument-functions -o "$OUT/instrumented" "$HERE/calls.c"
printf 'function outer\n' > "$OUT/selective.conf"
printf 'function main\nfunction outer\nfunction middle\nfunction leaf\n' > "$OUT/all.conf"

seconds() { local start end; start=$(date +%s.%N); "$@" > /dev/null 2>&1; end=$(date +%s.%N); echo "$end - $start" | bc -l; }
declare -A times
echo "load average before: $(cat /proc/loadavg)"
for ((r = 0; r < REPEATS; ++r)); do
  times[vanilla]+=" $(seconds "$OUT/vanilla" "$ROUNDS")"
  times[hooks-off]+=" $(seconds "$WHATIF" run -q --fixed-speedup 0 -o "$OUT/p.jsonl" --- "$OUT/instrumented" "$ROUNDS")"
  times[selective]+=" $(seconds "$WHATIF" run -q --fixed-speedup 0 --counters "$OUT/selective.conf" -o "$OUT/p.jsonl" --- "$OUT/instrumented" "$ROUNDS")"
  times[all]+=" $(seconds "$WHATIF" run -q --fixed-speedup 0 --counters "$OUT/all.conf" -o "$OUT/all.jsonl" --- "$OUT/instrumented" "$ROUNDS")"
  times[whatif-only]+=" $(seconds "$WHATIF" run -q --fixed-speedup 0 -o "$OUT/p.jsonl" --- "$OUT/vanilla" "$ROUNDS")"
done
echo "load average after: $(cat /proc/loadavg)"
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median "${times[vanilla]}")
printf '%-12s %10s %8s   (%d rounds = %d calls, %d interleaved repeats)\n' variant median_s ratio "$ROUNDS" $((ROUNDS * 10101 + 1)) "$REPEATS"
for v in vanilla whatif-only hooks-off selective all; do
  m=$(median "${times[$v]}")
  printf '%-12s %10.3f %8.2f\n' "$v" "$m" "$(echo "$m / $base" | bc -l)"
done
echo
echo "per-call counters in the last 'all' run:"
"$WHATIF" report --counters "$OUT/all.jsonl" | sed -n '1,8p'
