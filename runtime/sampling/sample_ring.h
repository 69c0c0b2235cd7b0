// A fixed-size single-producer single-consumer ring of samples: the timer sampler's signal handler
// (producer, on the sampled thread) and the profiler thread (consumer). No allocation after setup.
#pragma once
#include <atomic>
#include <cstdint>

#include "base/signal_safe.h"
#include "os/perf_event.h"

namespace whatif::sampling {

class SampleRing {
 public:
  static constexpr uint32_t kCapacity = 128;  // power of two

  /// Producer side (signal handler). Returns false and counts a loss when full.
  WHATIF_SIGNAL_SAFE bool push(const os::RawSample& sample) {
    uint32_t head = head_.load(std::memory_order_relaxed);
    // Acquire pairs with the consumer's release of tail_: the slot is free to overwrite.
    uint32_t tail = tail_.load(std::memory_order_acquire);
    if (head - tail >= kCapacity) {
      lost_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    slots_[head & (kCapacity - 1)] = sample;
    // Release pairs with the consumer's acquire of head_: the slot's contents are visible.
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  /// Consumer side (profiler thread).
  template <typename Visitor>
  uint32_t drain(Visitor&& visit) {
    uint32_t tail = tail_.load(std::memory_order_relaxed);
    uint32_t head = head_.load(std::memory_order_acquire);  // pairs with push's release
    for (uint32_t i = tail; i != head; ++i) visit(static_cast<const os::RawSample&>(slots_[i & (kCapacity - 1)]));
    tail_.store(head, std::memory_order_release);  // pairs with push's acquire
    return head - tail;
  }

  uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> head_{0};
  std::atomic<uint32_t> tail_{0};
  std::atomic<uint64_t> lost_{0};
  os::RawSample slots_[kCapacity];
};

}  // namespace whatif::sampling
