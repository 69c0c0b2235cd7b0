// Weighting inserted delay by the requests in flight (latency points). Runs on any thread, in the
// signal handler of a thread crediting its own samples too. Signal-safe only: atomics.
#include "progress/progress_points.h"

namespace whatif::progress {

WHATIF_SIGNAL_SAFE void CounterRegistry::on_delay_inserted(uint64_t delay_ns) {
  if (delay_ns == 0) return;
  // Only the latency BEGIN slots, not the whole table: this runs at every credit.
  std::size_t latency = latency_used_.load(std::memory_order_acquire);  // pairs with get's release
  for (std::size_t i = 0; i < latency; ++i) {
    CounterSlot& slot = slots_[latency_[i]];
    int64_t in_flight = static_cast<int64_t>(__atomic_load_n(&slot.counter.count, __ATOMIC_RELAXED));
    int partner = slot.partner.load(std::memory_order_acquire);  // pairs with get's release
    if (partner >= 0) {
      in_flight -= static_cast<int64_t>(__atomic_load_n(&slots_[partner].counter.count, __ATOMIC_RELAXED));
    }
    if (in_flight > 0) slot.delayed_in_flight_ns.fetch_add(in_flight * static_cast<int64_t>(delay_ns), std::memory_order_relaxed);
  }
}

}  // namespace whatif::progress
