#!/usr/bin/env bash
# CPU cost of the per-instruction histogram: the fixed-work mix kernel with libwhatif.so preloaded
# (sampling on, end-to-end), WHATIF_INSTRUCTIONS on and off, interleaved; prints each run's process CPU
# seconds (user+sys: the program and the profiler thread) and the medians. Usage: overhead.sh BUILD_DIR [PAIRS] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
pairs=${2:-5}
rounds=${3:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_icache.py" "$work/icache_body.h"
gcc -O2 -g -I"$work" -o "$work/micro" "$here/micro.c"
run() {  # $1: on|off
  local out="$work/p.jsonl"
  rm -f "$out"
  /usr/bin/time -f "%U %S" -o "$work/time" env LD_PRELOAD="$build/lib/libwhatif.so" WHATIF_OUTPUT="$out" \
    WHATIF_END_TO_END=1 WHATIF_LOG=error WHATIF_INSTRUCTIONS="$1" "$work/micro" mix "$rounds" >/dev/null
  awk '{printf "%.3f\n", $1 + $2}' "$work/time"
}
on=() off=()
for ((i = 0; i < pairs; i++)); do
  on+=("$(run on)")
  off+=("$(run off)")
  echo "pair $i: on ${on[-1]} s, off ${off[-1]} s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "median CPU: on $(median "${on[@]}") s, off $(median "${off[@]}") s; load: $(cat /proc/loadavg)"
