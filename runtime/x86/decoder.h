// The project's one x86-64 decoder (over Zydis 4): instruction length and control-transfer class,
// with the statically known target. Allocation-free and lock-free, so the branch tracer may call it
// in signal context; the offline stall analysis uses it to disassemble procedures.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/signal_safe.h"

namespace whatif::x86 {

/// How an instruction may move the program counter.
enum class Transfer : uint8_t {
  kNone,              ///< falls through to the next instruction
  kJump,              ///< unconditional direct jmp: target known
  kConditional,       ///< jcc, loop*, jrcxz/jecxz: target known, taken depends on flags/rcx
  kCall,              ///< direct call: target known
  kIndirectJump,      ///< jmp through a register or memory
  kIndirectCall,      ///< call through a register or memory
  kReturn,            ///< ret
  kOther,             ///< syscall, int, ud2, hlt, ... (leaves the traced code or faults)
};

/// One decoded instruction.
struct Instruction {
  uint8_t length = 0;          ///< bytes; 0 when the bytes are not a valid instruction
  Transfer transfer = Transfer::kNone;
  uint64_t target = 0;         ///< absolute target for kJump, kConditional and kCall
  uint16_t mnemonic = 0;       ///< Zydis's ZydisMnemonic, for callers that need the exact kind
};

/// A decoder for 64-bit code. Construct once; decode() is const and may be called concurrently.
class Decoder {
 public:
  Decoder();
  /// Decodes the instruction in `bytes` (at most `size` bytes readable) that lives at `address`.
  /// Returns length 0 for bytes that do not decode.
  WHATIF_SIGNAL_SAFE Instruction decode(const uint8_t* bytes, std::size_t size, uint64_t address) const;

 private:
  alignas(8) unsigned char state_[64];  // a ZydisDecoder, kept opaque so Zydis stays out of headers
};

}  // namespace whatif::x86
