// Per-instruction sample counts (see instruction_counts.h). Profiler thread only.
#include "experiment/instruction_counts.h"

namespace whatif::experiment {
namespace {

constexpr std::size_t kInitialSlots = 4096;  // a hot loop's instructions fit without growing

std::size_t hash(uint64_t ip) {
  // Fibonacci hashing: instruction addresses differ in their low bits, the multiply spreads them.
  return static_cast<std::size_t>((ip * 0x9E3779B97F4A7C15ull) >> 20);
}

}  // namespace

InstructionCounts::InstructionCounts() : slots_(kInitialSlots) {}

void InstructionCounts::add(uint64_t ip, uint64_t weight) {
  if (ip == 0) return;
  std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash(ip) & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.ip == ip) {
      slot.samples += weight;
      return;
    }
    if (slot.ip == 0) {
      slot.ip = ip;
      slot.samples = weight;
      if (++used_ * 2 > slots_.size()) grow();
      return;
    }
  }
}

void InstructionCounts::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  used_ = 0;
  for (const Slot& slot : old) {
    if (slot.ip != 0) add(slot.ip, slot.samples);
  }
}

}  // namespace whatif::experiment
