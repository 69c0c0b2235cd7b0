#!/usr/bin/env bash
# Culprit validation of the stall analysis (docs/stalls.md): four micro-benchmarks with one known
# cause each (micro.c); prints each kernel's Figure-4 summary, whose dynamic+static causes should rank
# the known cause first. Usage: benchmarks/stalls/run.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
seconds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_icache.py" "$work/icache_body.h"
gcc -O2 -g -I"$work" -o "$work/micro" "$here/micro.c"
echo "load: $(cat /proc/loadavg)"
for kernel in chase divide branch icache; do
  "$build/launcher/whatif" run -q --end-to-end -o "$work/$kernel.jsonl" --- "$work/micro" "$kernel" "$seconds" >/dev/null 2>&1
  echo "== $kernel"
  "$build/launcher/whatif" report --summary "$work/$kernel.jsonl" | sed -n '1,/Subtotal static/p' | grep -v '^\*\*\* *$'
done
