// Per-instruction sample counts (DCPI's hash table): sampled IP -> cumulative samples, kept on the
// profiler thread as it drains the samplers, never in a handler. Profiler thread only.
#pragma once
#include <cstdint>
#include <vector>

namespace whatif::experiment {

/// An open-addressing hash table keyed by runtime IP, linear probing, power-of-two capacity that
/// doubles at half load. Adding a sample is one hash and (usually) one probe: it is on the profiler
/// thread's per-sample path, so it must cost next to nothing against the attribution beside it.
class InstructionCounts {
 public:
  InstructionCounts();
  /// Adds `weight` samples at `ip` (0 is ignored: no instruction lives there).
  void add(uint64_t ip, uint64_t weight);
  /// Distinct IPs counted so far.
  std::size_t size() const { return used_; }
  /// Calls `visit(ip, samples)` for each IP with samples, in no particular order.
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (const Slot& slot : slots_) {
      if (slot.ip != 0) visit(slot.ip, slot.samples);
    }
  }

 private:
  struct Slot {
    uint64_t ip = 0;  // 0: empty
    uint64_t samples = 0;
  };
  void grow();
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
};

}  // namespace whatif::experiment
