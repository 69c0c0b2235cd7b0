#!/usr/bin/env bash
# Checks that objects compiled from *_signal.cpp (code that runs in signal handlers) reference no
# allocator, lock, stdio or exception symbol. Usage: signal_safety_test.sh OBJECT...
set -euo pipefail
forbidden='malloc|calloc|realloc|free$|operator new|operator delete|_Znwm|_Znam|_ZdlPv|_ZdaPv|pthread_mutex|printf|puts|fwrite|fopen|__cxa_throw|__cxa_allocate_exception|std::__throw'
status=0
for object in "$@"; do
  bad=$(nm -uC "$object" | grep -E "$forbidden" || true)
  if [[ -n "$bad" ]]; then
    echo "FAIL: $object calls signal-unsafe functions:"; echo "$bad"; status=1
  else
    echo "ok: $(basename "$object") ($(nm -u "$object" | wc -l) undefined symbols, none signal-unsafe)"
  fi
done
exit $status
