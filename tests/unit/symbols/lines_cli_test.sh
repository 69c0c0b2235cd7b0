#!/bin/sh
# `whatif lines` end to end on the symbol fixtures: summary, FILE:LINE, ADDRESS, errors.
# Usage: lines_cli_test.sh WHATIF FIXTURE_BIN_DIR FIXTURE_SRC_DIR
set -u
whatif=$1 bin=$2 src=$3
failures=0 passed=0
check() {  # check NAME EXPECTED_RC REGEX -- COMMAND...
  name=$1 want_rc=$2 regex=$3
  shift 4
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
    echo "FAIL $name: rc=$rc (want $want_rc), output:"
    printf '%s\n' "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}
marker() { grep -n "LINE:$2\$\|LINE:$2[^a-z_]" "$src/$1" | head -1 | cut -d: -f1; }

compute_line=$(marker fx_main.c fx_compute)
util_body=$(marker fx_util.c fx_util_body)
addr=$(nm "$bin/fx_gcc_nopie" | awk '$3 == "fx_compute" {print $1}')

check summary 0 "compilation units: 2" -- "$whatif" lines "$bin/fx_gcc_dwarf5"
check summary-versions 0 "DWARF versions: +3" -- "$whatif" lines "$bin/fx_gcc_dwarf3"
check file-line 0 "fx_util.c:$util_body: 1 range" -- "$whatif" lines "$bin/fx_gcc_dwarf4" "fx_util.c:$util_body"
check address 0 "fx_main.c:$compute_line +fx_compute" -- "$whatif" lines "$bin/fx_gcc_nopie" "0x$addr"
check debuglink 0 "fx_debuglink.debug \(debuglink\)" -- "$whatif" lines "$bin/fx_debuglink"
check build-id 0 "\(build-id\)" -- "$whatif" lines --debug-dir "$bin/debugroot" "$bin/fx_buildid"
check no-debug-info 1 "no debug info for .*fx_nodebug: rebuild with -g, or install its debug symbols" -- \
  "$whatif" lines "$bin/fx_nodebug"
check missing-file 1 "cannot open .*nonexistent" -- "$whatif" lines "$bin/nonexistent"
check no-code 1 "no code for fx_main.c:1 " -- "$whatif" lines "$bin/fx_gcc_dwarf5" fx_main.c:1
check object-file 1 "is a relocatable object file" -- "$whatif" lines "$bin/fx_util.o"
check bad-where 2 "neither FILE:LINE nor a hex ADDRESS" -- "$whatif" lines "$bin/fx_gcc_dwarf5" zzz
check no-line-table 1 "no line table covers address 0x1" -- "$whatif" lines "$bin/fx_gcc_dwarf5" 0x1
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
