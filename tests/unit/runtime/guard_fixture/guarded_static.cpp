// Fixture of static_guard_check.py's self-test: a function-local static built on first use, which
// the check must report. Never linked into the runtime; no thread context.
#include <unistd.h>

long guarded_page_size() {
  static const long size = sysconf(_SC_PAGESIZE);
  return size;
}
