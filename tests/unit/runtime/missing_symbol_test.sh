#!/usr/bin/env bash
# A required original symbol that cannot be resolved must end the process promptly with an error
# naming it (log::fatal inside real::resolve), not hang. Usage: missing_symbol_test.sh LIBRARY PROGRAM
# where LIBRARY is the test-only runtime copy built with WHATIF_TEST_MISSING_REQUIRED.
set -uo pipefail
library=$1 program=$2
stderr=$(mktemp)
trap 'rm -f "$stderr"' EXIT
# A sanitizer build's library needs the ASan runtime first in the preload list.
preload=$library
asan=$(ldd "$library" | awk '/libasan/ {print $3}')
[[ -n "$asan" ]] && preload="$asan:$library"
timeout -s KILL 10 env LD_PRELOAD="$preload" "$program" 2>"$stderr"
status=$?
cat "$stderr"
if ((status == 137)); then echo "FAIL: the process hung (killed after 10 s)"; exit 1; fi
if ((status != 70)); then echo "FAIL: exit status $status, expected 70"; exit 1; fi
if ! grep -q "whatif: error: cannot find the original whatif_test_missing_symbol" "$stderr"; then
  echo "FAIL: the error does not name the missing symbol"; exit 1
fi
echo "ok: exited with 70 naming the symbol"
