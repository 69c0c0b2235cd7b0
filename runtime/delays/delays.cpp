// Profiler-thread half of delay accounting: publishing the selected line's address ranges.
#include "delays/delays.h"

namespace whatif::delays {

void publish_selected_ranges(GlobalDelays& global, const uint64_t* begins, const uint64_t* ends, uint32_t count) {
  SelectedRanges& ranges = global.selected;
  if (count > SelectedRanges::kMax) count = SelectedRanges::kMax;
  uint32_t sequence = ranges.sequence.load(std::memory_order_relaxed);
  ranges.sequence.store(sequence + 1, std::memory_order_relaxed);  // odd: being written
  // Release fence: readers that see any new range below also see the odd sequence.
  std::atomic_thread_fence(std::memory_order_release);
  for (uint32_t i = 0; i < count; ++i) {
    ranges.begin[i].store(begins[i], std::memory_order_relaxed);
    ranges.end[i].store(ends[i], std::memory_order_relaxed);
  }
  ranges.count.store(count, std::memory_order_relaxed);
  // Release pairs with snapshot_selected_ranges' acquire of the sequence: the ranges are complete.
  ranges.sequence.store(sequence + 2, std::memory_order_release);
}

}  // namespace whatif::delays
