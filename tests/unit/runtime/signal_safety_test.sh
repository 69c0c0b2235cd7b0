#!/usr/bin/env bash
# Checks that objects compiled from *_signal.cpp (code that runs in signal handlers) reference no
# allocator, lock, stdio or exception symbol. Usage: signal_safety_test.sh OBJECT... (objects of
# other sources are ignored, so whole components can be passed).
set -euo pipefail
forbidden='malloc|calloc|realloc|free$|operator new|operator delete|_Znwm|_Znam|_ZdlPv|_ZdaPv|pthread_mutex|printf|puts|fwrite|fopen|__cxa_throw|__cxa_allocate_exception|std::__throw'
status=0
checked=0
for object in "$@"; do
  [[ "$(basename "$object")" == *_signal.cpp.o ]] || continue
  symbols=$(nm -uC "$object") || { echo "FAIL: cannot read $object"; exit 1; }
  # Sanitizer instrumentation (e.g. ASan's __asan_stack_malloc_N fake stack) is not the code's own
  # call; the uninstrumented build checks what the code itself calls.
  bad=$(grep -vE ' (__asan_|__ubsan_|__tsan_|__sanitizer_)' <<<"$symbols" | grep -E "$forbidden" || true)
  checked=$((checked + 1))
  if [[ -n "$bad" ]]; then
    echo "FAIL: $object calls signal-unsafe functions:"; echo "$bad"; status=1
  else
    echo "ok: $(basename "$object") ($(grep -c . <<<"$symbols" || true) undefined symbols, none signal-unsafe)"
  fi
done
if ((checked == 0)); then echo "FAIL: no *_signal.cpp object given"; exit 1; fi
exit $status
