// Installing progress-point patches in the running process: a trampoline page near the site, the
// 5-byte jmp written at the site, a 64-bit visit counter the profiler reads. Profiler thread only,
// while no other thread of the program can run the patched code (see install()).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "base/result.h"
#include "patch/plan.h"

namespace whatif::patch {

/// A patch in place. Its pages stay mapped for the process's lifetime: threads may run the
/// trampoline until exit.
struct Installed {
  uint64_t site = 0;
  const uint64_t* counter = nullptr;   ///< visits; read with an atomic load
  uint64_t trampoline_begin = 0;       ///< the trampoline's code, [begin, end)
  uint64_t trampoline_end = 0;
  std::size_t displaced = 0;           ///< bytes of instructions moved off the site
  std::size_t displaced_instructions = 0;

  /// Visits so far (any thread).
  uint64_t visits() const { return __atomic_load_n(counter, __ATOMIC_RELAXED); }
};

/// Patches the instruction at `site`, inside the function [function_begin, function_end) of this
/// process, to count each visit in a trampoline. The caller guarantees that no other thread runs
/// [site, site + 8) meanwhile (the runtime patches at start-up while the program's only thread
/// waits); the jmp is still written with one aligned 8-byte store when it fits in one, else its
/// last four bytes before its first. Refuses with the reason plan_patch() gives, or when no page
/// within reach is free or the code's protection cannot be changed.
/// `fragments` are the [begin, end) ranges of the parts split off the function (NAME.cold).
Result<Installed> install(uint64_t site, uint64_t function_begin, uint64_t function_end,
                          const std::vector<std::pair<uint64_t, uint64_t>>& fragments = {});

}  // namespace whatif::patch
