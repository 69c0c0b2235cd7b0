#!/bin/sh
# Symbol-layer benchmark: generates a C program with >= 200k line-table rows, builds it with
# gcc -g, and prints the time and peak RSS to open it, answer the first lookup and build the map.
# Usage: benchmarks/symbols/run.sh [BUILD_DIR] [FILES] [FUNCS]   (default build-sym, 100, 220)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build-sym}
files=${2:-100}
funcs=${3:-220}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
out="$root/bench-out/symbols"
mkdir -p "$out/src"

cmake --build "$build" --target whatif_symbols_bench >/dev/null
if [ "$(cat "$out/params" 2>/dev/null)" != "$files $funcs" ] || [ ! -x "$out/big" ]; then
  rm -f "$out/src"/*.c "$out/src"/*.o "$out/big"
  "$here/gen_program.py" "$out/src" "$files" "$funcs"
  start=$(date +%s.%N)
  ls "$out/src"/*.c | xargs -P "$(nproc)" -I{} sh -c 'gcc -g -O0 -c "$1" -o "$1.o"' _ {}
  gcc -g -o "$out/big" "$out/src"/*.c.o
  end=$(date +%s.%N)
  echo "$files $funcs" >"$out/params"
  echo "generated $files files x $funcs functions; built in $(awk "BEGIN {printf \"%.1f\", $end - $start}") s"
fi
ls -l "$out/big" | awk '{printf "binary: %s bytes\n", $5}'
addr=$(nm "$out/big" | awk -v f="fn_$((files / 2))_$((funcs / 2))" '$3 == f {print $1}')
"$build/benchmarks/symbols/whatif_symbols_bench" "$out/big" "$addr" 1000000
