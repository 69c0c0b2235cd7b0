// Moving x86-64 instructions to another address with the same effect (Zydis): rip-relative
// operands re-aimed, rel8/rel32 branches widened to rel32, direct calls pushing the original return
// address. Pure and allocation-free; used by the code patcher on the profiler thread.
#pragma once
#include <cstddef>
#include <cstdint>

namespace whatif::x86 {

/// Why an instruction could not be moved.
enum class RelocateStatus : uint8_t {
  kOk,
  kUndecodable,        ///< the bytes are not an instruction
  kUnsupported,        ///< cannot be re-encoded: an indirect call, loop, jrcxz, xbegin, ...
  kOutOfRange,         ///< the target is beyond ±2 GiB of the new address
  kNoRoom,             ///< the output buffer is too small
};

/// The longest output relocate() produces for one instruction (a direct call: 25 bytes).
inline constexpr std::size_t kMaxRelocatedLength = 32;

/// Re-encodes the instruction in `bytes` (at most `size` readable) that lives at `from` so that
/// it has the same effect when it runs at `to`: memory operands relative to rip keep their absolute
/// target; jmp and jcc (rel8 or rel32) become their rel32 forms aimed at the same target; a direct
/// call becomes "push the original return address; jmp target", so the callee returns to the
/// original code and unwinders see the original caller. Writes at most `capacity` bytes to `out`
/// and their count to `written`; `consumed` gets the original instruction's length.
RelocateStatus relocate(const uint8_t* bytes, std::size_t size, uint64_t from, uint64_t to, uint8_t* out,
                        std::size_t capacity, std::size_t& written, std::size_t& consumed);

/// A human-readable reason for a status ("ok" for kOk).
const char* describe(RelocateStatus status);

}  // namespace whatif::x86
