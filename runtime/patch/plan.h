// Planning a progress-point patch (pure, unit-tested on fixture bytes): which instructions at the
// site are displaced by a 5-byte jmp, whether that is safe, and the trampoline's code that counts a
// visit and runs them. Profiler thread (through the patcher) and tests; no syscalls.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace whatif::patch {

/// The length of the jmp rel32 written at the site.
inline constexpr std::size_t kJumpLength = 5;

/// A safe patch: the bytes to write at the site and the trampoline to place at its address.
struct Plan {
  std::size_t displaced = 0;            ///< bytes of whole instructions moved to the trampoline (>= 5)
  std::size_t displaced_instructions = 0;
  uint8_t jump[kJumpLength] = {};       ///< jmp rel32 from the site to the trampoline
  std::vector<uint8_t> trampoline;      ///< count, displaced instructions, jmp back
  bool saves_flags = true;              ///< the count is wrapped in pushfq/popfq (flags live at the site)
};

/// The code of the function holding the site, as it is in memory.
struct FunctionCode {
  const uint8_t* bytes = nullptr;
  uint64_t begin = 0;                   ///< runtime address of bytes[0]
  std::size_t size = 0;
};

/// Plans a patch of the instruction at `site` that increments the 64-bit counter at
/// `counter_address` (atomically, flags and red zone preserved: the flags are saved only where the
/// code after the site may read them before writing them) on every visit, with the
/// trampoline at `trampoline_address`. Refuses, with the reason, when the function cannot be
/// decoded, `site` is not an instruction boundary in it, fewer than 5 bytes of instructions follow
/// within the function, a direct branch (or a call's return) lands inside the displaced bytes past
/// the site, the displaced bytes run past an unconditional transfer, the function has computed
/// jumps while more than one instruction would be displaced, or an instruction cannot be moved.
/// `fragments` are the parts split off the function (NAME.cold): their branches into it count too.
Result<Plan> plan_patch(const FunctionCode& function, uint64_t site, uint64_t trampoline_address, uint64_t counter_address,
                        const std::vector<FunctionCode>& fragments = {});

}  // namespace whatif::patch
