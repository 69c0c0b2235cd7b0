// Lookups in the published code map: binary searches over a snapshot that never changes once
// published. Signal-safe; run in the tracer's handlers.
#include <atomic>

#include "lbr/code_map.h"

namespace whatif::lbr {

std::atomic<const CodeMap*> g_code_map{nullptr};

namespace {
WHATIF_SIGNAL_SAFE const CodeRange* find(const CodeRange* ranges, uint32_t count, uint64_t address) {
  uint32_t low = 0, high = count;
  while (low < high) {  // first range whose end is past address
    uint32_t middle = low + (high - low) / 2;
    if (ranges[middle].end <= address) low = middle + 1;
    else high = middle;
  }
  return low < count && ranges[low].begin <= address ? &ranges[low] : nullptr;
}
}  // namespace

WHATIF_SIGNAL_SAFE const CodeRange* CodeMap::code_at(uint64_t address) const { return find(code, code_count, address); }

WHATIF_SIGNAL_SAFE bool CodeMap::in_rseq(uint64_t address) const { return find(rseq, rseq_count, address) != nullptr; }

WHATIF_SIGNAL_SAFE const CodeMap* current_code_map() { return g_code_map.load(std::memory_order_acquire); }

}  // namespace whatif::lbr
