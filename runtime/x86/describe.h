// The offline view of one decoded instruction for the stall analysis (analysis/stalls): its text,
// the registers it reads and writes, its memory accesses and its operand form (the latency table's
// key). Built on the same Zydis decoder as decoder.h. Allocates: offline only, never signal context.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "x86/decoder.h"

namespace whatif::x86 {

/// What the stall analysis needs to know about one instruction.
struct Description {
  Instruction basic;              ///< length 0: not an instruction
  std::string text;               ///< Intel syntax, e.g. "mov rax, qword ptr [rbx+0x8]"
  std::string mnemonic;           ///< e.g. "mov", "rep stosb"
  std::string form;               ///< mnemonic and operand kinds, e.g. "add r64,m64" (latency table key)
  std::vector<uint16_t> reads;    ///< registers read (largest enclosing: eax -> rax), flags as kFlags
  std::vector<uint16_t> writes;   ///< registers written, likewise
  std::vector<uint16_t> address;  ///< registers of memory addresses (base, index), a subset of reads
  bool loads = false;             ///< reads memory (an explicit memory operand or push/pop/ret)
  bool stores = false;            ///< writes memory
  bool divides = false;
  /// Its memory operand is addressed from rsp, rbp or rip alone: the stack or a global, pages that
  /// stay in the TLB.
  bool local_address = false;           ///< integer or floating-point divide, or square root
};

/// A pseudo register number for the flags (beyond Zydis's register numbers).
inline constexpr uint16_t kFlags = 0xFFFF;

/// Decodes and describes the instruction at `address`. Offline only.
Description describe(const Decoder& decoder, const uint8_t* bytes, std::size_t size, uint64_t address);

}  // namespace whatif::x86
