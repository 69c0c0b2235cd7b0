// The reload signal's side of `whatif ctl PID reload` (signal context, any application thread): it
// only raises a flag; the profiler thread re-reads the function list and swaps the set.
#include "base/signal_safe.h"
#include "fncounters/function_counters.h"

namespace whatif::fncounters {

WHATIF_SIGNAL_SAFE std::atomic<bool>& reload_flag() {
  static std::atomic<bool> requested{false};
  return requested;
}

WHATIF_SIGNAL_SAFE void on_reload_signal(int) { reload_flag().store(true, std::memory_order_release); }

}  // namespace whatif::fncounters
