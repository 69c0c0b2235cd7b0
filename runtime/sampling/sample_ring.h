// A fixed-size single-producer single-consumer ring of samples: the timer sampler's signal handler
// (producer, on the sampled thread) and the profiler thread (consumer). The sampled thread may also
// scan its newest samples before the consumer (scan_own). No allocation after setup.
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

  /// Consumer side (profiler thread). RawSample::owner_scanned says whether the sampled thread
  /// scanned the sample first (scan_own).
  template <typename Visitor>
  uint32_t drain(Visitor&& visit) {
    uint32_t tail = tail_.load(std::memory_order_relaxed);
    uint32_t head = head_.load(std::memory_order_acquire);  // pairs with push's release
    // Claim up to head and read no further; the sampled thread scanned up to owner_until.
    uint32_t owner_until = scanned_.claim_until(head);
    if (Cursor::ahead(owner_until, head)) head = owner_until;
    for (uint32_t i = tail; i != head; ++i) {
      os::RawSample& sample = slots_[i & (kCapacity - 1)];
      sample.owner_scanned = Cursor::ahead(owner_until, i);
      visit(static_cast<const os::RawSample&>(sample));
    }
    tail_.store(head, std::memory_order_release);  // pairs with push's acquire
    return head - tail;
  }

  /// The sampled thread, outside its own push: visits the samples neither it nor the consumer has
  /// scanned. Leaves them to the consumer when they fill more than half the ring (its release of
  /// slots lets push reuse them).
  WHATIF_SIGNAL_SAFE void scan_own(os::OwnSampleVisitor visit, void* context) {
    uint32_t head = head_.load(std::memory_order_relaxed);  // this thread's own pushes
    uint32_t position = scanned_.position();
    if (!Cursor::ahead(head, position) || head - position > kCapacity / 2) return;
    if (scanned_.claim_until(head) != position) return;  // the consumer took them meanwhile
    for (; position != head; ++position) visit(context, slots_[position & (kCapacity - 1)]);
  }

  uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

  /// Producer side: the position the next push fills, and how many pushed samples the consumer has
  /// not finished visiting (acquire: every position before them was visited, its slot free).
  WHATIF_SIGNAL_SAFE uint32_t next_position() const { return head_.load(std::memory_order_relaxed); }
  WHATIF_SIGNAL_SAFE uint32_t pending() const {
    return head_.load(std::memory_order_relaxed) - tail_.load(std::memory_order_acquire);
  }

 private:
  std::atomic<uint32_t> head_{0};
  std::atomic<uint32_t> tail_{0};
  std::atomic<uint64_t> lost_{0};
  using Cursor = os::ScanCursor<uint32_t>;
  Cursor scanned_;
  os::RawSample slots_[kCapacity];
};

}  // namespace whatif::sampling
