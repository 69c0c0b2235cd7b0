// The re-entrancy guard: a thread-local flag set while a thread runs runtime code, so calls the
// runtime itself makes into interposed functions go straight to the originals. Signal-safe.
#pragma once
#include "base/signal_safe.h"

namespace whatif::interpose {

namespace detail {
extern constinit __attribute__((tls_model("initial-exec"))) thread_local bool t_inside;  // constinit: no TLS wrapper call
}

/// True on runtime-owned threads (the profiler) and inside runtime code on application threads.
/// Inline: the stdio shims ask it on each call (a putc loop).
WHATIF_SIGNAL_SAFE inline bool inside_runtime() { return detail::t_inside; }
void mark_runtime_thread();

class ReentryGuard {
 public:
  ReentryGuard();
  ~ReentryGuard();
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;
  /// False when the thread was already inside the runtime: the caller must pass straight through.
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

}  // namespace whatif::interpose
