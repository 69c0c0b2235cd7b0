// Recognising a spin-wait loop in code bytes: pure and allocation-free, called in signal context
// (threads::spin_wait_at, from the sample handler) and on the profiler thread.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/signal_safe.h"
#include "x86/decoder.h"

namespace whatif::x86 {

/// The longest loop, in bytes from its first instruction to the end of its branch back, taken for
/// a spin-wait: a load or an atomic exchange, a test, a pause, the branch.
inline constexpr std::size_t kMaxSpinLoopBytes = 32;

/// Whether `ip` is inside a small loop that only waits: every instruction from the loop's start to
/// its branch back (within kMaxSpinLoopBytes) is a load, a move, a compare or test, an atomic
/// exchange or compare-exchange, a pause, a fence, a nop or a branch; none writes memory other
/// than the atomics, none computes, and one reads memory. That is `while (!flag) ;` or a
/// test-and-set lock's retry with or without x86's pause; a compute or search loop changes a
/// register or memory and is not one. `code` holds `size` readable bytes from `code_address`, and
/// must reach kMaxSpinLoopBytes either side of `ip` (what lies outside counts as no loop).
WHATIF_SIGNAL_SAFE bool spin_loop_at(const Decoder& decoder, const uint8_t* code, std::size_t size,
                                     uint64_t code_address, uint64_t ip);

}  // namespace whatif::x86
