// Profiler-thread half of delay accounting: crediting samples in the selected line.
#include "delays/delays.h"

namespace whatif::delays {

void credit_selected_sample(GlobalDelays& global, LocalDelays& local, uint32_t periods) {
  uint64_t size = global.delay_size_ns.load(std::memory_order_acquire) * periods;
  if (size == 0) return;
  uint64_t mine = local.local_ns.fetch_add(size, std::memory_order_acq_rel) + size;
  global.raise_to(mine);
}

}  // namespace whatif::delays
