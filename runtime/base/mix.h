// splitmix64's finaliser: a well-spread 64-bit number from a seed, for draws that must differ
// between threads started or ended at the same moment. Pure; any thread or signal context.
#pragma once
#include <cstdint>

#include "base/signal_safe.h"

namespace whatif {

/// Mixes the time and a thread id into an unrelated 64-bit number (splitmix64's finaliser).
WHATIF_SIGNAL_SAFE inline uint64_t mix_seed(uint64_t now_ns, uint64_t tid) {
  uint64_t x = now_ns ^ (tid << 32) ^ 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace whatif
