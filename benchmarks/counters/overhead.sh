#!/usr/bin/env bash
# Overhead of `whatif run --counters` on a call-heavy program (benchmarks/counters/calls.c), ScALPEL's
# three variants plus two references, in interleaved runs, median wall time of each:
#   vanilla      built without -finstrument-functions, run natively
#   instr-native built with -finstrument-functions, run natively (glibc's no-op hooks)
#   hooks-off    built with -finstrument-functions, under whatif run without --counters (hooks return at once)
#   selective    instrumented, --counters selecting `outer` only (one call in 10101 pays)
#   all          instrumented, --counters selecting main, outer, middle and leaf
#   whatif-only  vanilla build under whatif run (the causal profiler's own cost, for reference)
#   middle-time  --counters selecting `middle` (100 calls a round), time only
#   middle-both  the same with `events page-faults,context-switches`: both read at every call
#   cycled-1     the same two events as two `eventset`s cycled every call (`cycle 1`): one read per
#                call, two ioctls per switch
#   cycled-10    the same with `cycle 10`: the switch's ioctls paid once per 10 calls
#   cycled-100   the same with `cycle 100`
#   patch-native built with -fpatchable-function-entry=5 (5 NOPs per entry), run natively
#   patch-off    that build under whatif run, nothing selected (the NOPs stay NOPs)
#   patch-sel    that build, --counters selecting `outer` (its entry patched at start-up)
#   patch-middle that build, --counters selecting `middle` (compare middle-time)
# Every whatif run uses --fixed-speedup 0 (no virtual-speedup delays). Also prints the calibrated
# accuracy check: the per-call exclusive time of each function in the `all` run.
# Usage: benchmarks/counters/overhead.sh BUILD_DIR [ROUNDS] [REPEATS] [VARIANTS...] (default: all of
# them; `all` takes ~1.5 us per call where the time read is a system call). Not part of `make test`.
set -euo pipefail
BUILD=${1:?usage: overhead.sh BUILD_DIR [ROUNDS] [REPEATS]}
ROUNDS=${2:-200}
REPEATS=${3:-5}
shift $(( $# < 3 ? $# : 3 ))
VARIANTS=("$@")
[[ ${#VARIANTS[@]} -gt 0 ]] || VARIANTS=(vanilla instr-native whatif-only hooks-off selective all)
HERE=$(cd "$(dirname "$0")" && pwd)
WHATIF=$BUILD/launcher/whatif
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cc -O2 -g -o "$OUT/vanilla" "$HERE/calls.c"
cc -O2 -g -finstrument-functions -o "$OUT/instrumented" "$HERE/calls.c"
cc -O2 -g -fpatchable-function-entry=5 -o "$OUT/patchable" "$HERE/calls.c"
printf 'function outer\n' > "$OUT/selective.conf"
printf 'function main\nfunction outer\nfunction middle\nfunction leaf\n' > "$OUT/all.conf"
printf 'function middle\n' > "$OUT/middle-time.conf"
printf 'function middle\nevents page-faults,context-switches\n' > "$OUT/middle-both.conf"
printf 'function middle\neventset page-faults\neventset context-switches\ncycle 1\n' > "$OUT/cycled-1.conf"
printf 'function middle\neventset page-faults\neventset context-switches\ncycle 10\n' > "$OUT/cycled-10.conf"
printf 'function middle\neventset page-faults\neventset context-switches\ncycle 100\n' > "$OUT/cycled-100.conf"

seconds() { local start end; start=$(date +%s.%N); "$@" > /dev/null 2>&1; end=$(date +%s.%N); echo "$end - $start" | bc -l; }
declare -A times
echo "load average before: $(cat /proc/loadavg)"
run_variant() {
  case $1 in
    vanilla) seconds "$OUT/vanilla" "$ROUNDS" ;;
    instr-native) seconds "$OUT/instrumented" "$ROUNDS" ;;
    whatif-only) seconds "$WHATIF" run -q --fixed-speedup 0 -o "$OUT/p.jsonl" --- "$OUT/vanilla" "$ROUNDS" ;;
    hooks-off) seconds "$WHATIF" run -q --fixed-speedup 0 -o "$OUT/p.jsonl" --- "$OUT/instrumented" "$ROUNDS" ;;
    selective) seconds "$WHATIF" run -q --fixed-speedup 0 --counters "$OUT/selective.conf" -o "$OUT/p.jsonl" --- "$OUT/instrumented" "$ROUNDS" ;;
    patch-native) seconds "$OUT/patchable" "$ROUNDS" ;;
    patch-off) seconds "$WHATIF" run -q --fixed-speedup 0 -o "$OUT/p.jsonl" --- "$OUT/patchable" "$ROUNDS" ;;
    patch-sel) seconds "$WHATIF" run -q --fixed-speedup 0 --counters "$OUT/selective.conf" -o "$OUT/p.jsonl" --- "$OUT/patchable" "$ROUNDS" ;;
    patch-middle) seconds "$WHATIF" run -q --fixed-speedup 0 --counters "$OUT/middle-time.conf" -o "$OUT/p.jsonl" --- "$OUT/patchable" "$ROUNDS" ;;
    middle-time|middle-both|cycled-1|cycled-10|cycled-100)
      seconds "$WHATIF" run -q --fixed-speedup 0 --counters "$OUT/$1.conf" -o "$OUT/p.jsonl" --- "$OUT/instrumented" "$ROUNDS" ;;
    all) seconds "$WHATIF" run -q --fixed-speedup 0 --counters "$OUT/all.conf" -o "$OUT/all.jsonl" --- "$OUT/instrumented" "$ROUNDS" ;;
  esac
}
for ((r = 0; r < REPEATS; ++r)); do
  for v in "${VARIANTS[@]}"; do times[$v]+=" $(run_variant "$v")"; done
done
echo "load average after: $(cat /proc/loadavg)"
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median "${times[${VARIANTS[0]}]}")
printf '%-12s %10s %8s   (%d rounds = %d calls, %d interleaved repeats; ratio to %s)\n' variant median_s ratio \
  "$ROUNDS" $((ROUNDS * 10101 + 1)) "$REPEATS" "${VARIANTS[0]}"
for v in "${VARIANTS[@]}"; do
  m=$(median "${times[$v]}")
  printf '%-12s %10.3f %8.2f\n' "$v" "$m" "$(echo "$m / $base" | bc -l)"
done
if [[ -f $OUT/all.jsonl ]]; then
  echo
  echo "per-call counters in the last 'all' run (leaf does ~1 ns of work):"
  "$WHATIF" report --counters "$OUT/all.jsonl" | sed -n '1,8p'
fi
