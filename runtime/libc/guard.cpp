// The thread-local re-entrancy flag behind ReentryGuard (any thread, signal handlers included).
#include "libc/guard.h"

namespace whatif::interpose {
namespace detail {
constinit __attribute__((tls_model("initial-exec"))) thread_local bool t_inside = false;
}
using detail::t_inside;

void mark_runtime_thread() { t_inside = true; }

ReentryGuard::ReentryGuard() : entered_(!t_inside) { t_inside = true; }
ReentryGuard::~ReentryGuard() {
  if (entered_) t_inside = false;
}

}  // namespace whatif::interpose
