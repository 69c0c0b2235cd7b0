#!/usr/bin/env bash
# `make demo`: profiles the bundled example (examples/demo.cpp), prints the ranked answer and
# writes a self-contained HTML view of it. Usage: scripts/demo.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
out=demo-out
mkdir -p "$out"
whatif="$build/launcher/whatif"

echo "== The symbol map of the example (whatif lines):"
"$whatif" lines "$build/examples/demo"
echo
echo "== Profiling the example: whatif run -o $out/demo.jsonl --- $build/examples/demo 40000"
"$whatif" run -o "$out/demo.jsonl" --seed 1 --- "$build/examples/demo" 40000
echo
echo "== The answer (whatif report):"
"$whatif" report --top 8 "$out/demo.jsonl"
echo
if "$whatif" view -o "$out/demo.html" "$out/demo.jsonl" >/dev/null; then
  echo "== Open the interactive view: $(realpath "$out/demo.html")"
else
  echo "whatif: the HTML viewer is not built (needs node/npm); the profile is $(realpath "$out/demo.jsonl")" >&2
fi
