// Instruction relocation over Zydis 4 (see relocate.h). Pure: no allocation, no syscalls; the
// patcher calls it on the profiler thread, the unit tests on fixture bytes.
#include "x86/relocate.h"

#include <Zydis/Zydis.h>

#include <cstring>
#include <limits>

namespace whatif::x86 {
namespace {

bool fits_rel32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max();
}

void put32(uint8_t* at, int32_t value) { std::memcpy(at, &value, sizeof(value)); }

/// The rel32 displacement from the end of an instruction of `length` bytes at `to` to `target`.
bool rel32(uint64_t target, uint64_t to, std::size_t length, int32_t& out) {
  int64_t delta = static_cast<int64_t>(target - (to + length));
  if (!fits_rel32(delta)) return false;
  out = static_cast<int32_t>(delta);
  return true;
}

/// A decoder set up per call (a few stores): a lazily built static would take a guard that a fork
/// can copy held (see tests/unit/runtime/static_guard_check.py).
ZydisDecoder decoder() {
  ZydisDecoder d;
  ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  return d;
}

}  // namespace

RelocateStatus relocate(const uint8_t* bytes, std::size_t size, uint64_t from, uint64_t to, uint8_t* out,
                        std::size_t capacity, std::size_t& written, std::size_t& consumed) {
  written = 0;
  consumed = 0;
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  const ZydisDecoder zydis = decoder();
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zydis, bytes, size, &instruction, operands))) {
    return RelocateStatus::kUndecodable;
  }
  consumed = instruction.length;
  // A call through a register or memory would push the trampoline's address as the return
  // address: unwinders and exceptions would then cross code without unwind information.
  if (instruction.meta.category == ZYDIS_CATEGORY_CALL && operands[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE) {
    return RelocateStatus::kUnsupported;
  }
  bool rip_memory = false;
  bool relative_immediate = false;
  for (unsigned i = 0; i < instruction.operand_count; ++i) {
    rip_memory = rip_memory || (operands[i].type == ZYDIS_OPERAND_TYPE_MEMORY && operands[i].mem.base == ZYDIS_REGISTER_RIP);
    relative_immediate = relative_immediate || (operands[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && operands[i].imm.is_relative);
  }
  if (!rip_memory && !relative_immediate) {  // position-independent: copy
    if (capacity < instruction.length) return RelocateStatus::kNoRoom;
    std::memcpy(out, bytes, instruction.length);
    written = instruction.length;
    return RelocateStatus::kOk;
  }

  // A memory operand relative to rip: same bytes, displacement re-aimed at the same address.
  for (unsigned i = 0; i < instruction.operand_count; ++i) {
    const ZydisDecodedOperand& operand = operands[i];
    if (operand.type != ZYDIS_OPERAND_TYPE_MEMORY || operand.mem.base != ZYDIS_REGISTER_RIP) continue;
    if (instruction.raw.disp.size != 32) return RelocateStatus::kUnsupported;
    if (capacity < instruction.length) return RelocateStatus::kNoRoom;
    uint64_t target = from + instruction.length + static_cast<uint64_t>(instruction.raw.disp.value);
    int32_t disp = 0;
    if (!rel32(target, to, instruction.length, disp)) return RelocateStatus::kOutOfRange;
    std::memcpy(out, bytes, instruction.length);
    put32(out + instruction.raw.disp.offset, disp);
    written = instruction.length;
    return RelocateStatus::kOk;
  }

  // A direct branch: its immediate is relative to the next instruction.
  const ZydisDecodedOperand& first = operands[0];
  if (instruction.operand_count_visible == 0 || first.type != ZYDIS_OPERAND_TYPE_IMMEDIATE || !first.imm.is_relative) {
    return RelocateStatus::kUnsupported;
  }
  ZyanU64 absolute = 0;
  if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&instruction, &first, from, &absolute))) return RelocateStatus::kUnsupported;
  uint64_t target = absolute;
  int32_t disp = 0;
  switch (instruction.mnemonic) {
    case ZYDIS_MNEMONIC_JMP: {  // EB rel8 / E9 rel32 -> E9 rel32
      if (capacity < 5) return RelocateStatus::kNoRoom;
      if (!rel32(target, to, 5, disp)) return RelocateStatus::kOutOfRange;
      out[0] = 0xE9;
      put32(out + 1, disp);
      written = 5;
      return RelocateStatus::kOk;
    }
    case ZYDIS_MNEMONIC_CALL: {  // E8 rel32 -> lea rsp,[rsp-8]; mov [rsp],lo; mov [rsp+4],hi; jmp target
      constexpr std::size_t kLength = 5 + 7 + 8 + 5;
      if (capacity < kLength) return RelocateStatus::kNoRoom;
      uint64_t return_address = from + instruction.length;
      if (!rel32(target, to + kLength - 5, 5, disp)) return RelocateStatus::kOutOfRange;
      const uint8_t lea[] = {0x48, 0x8D, 0x64, 0x24, 0xF8};  // lea rsp, [rsp-8] (flags untouched)
      std::memcpy(out, lea, sizeof(lea));
      const uint8_t low[] = {0xC7, 0x04, 0x24};  // mov dword [rsp], imm32
      std::memcpy(out + 5, low, sizeof(low));
      put32(out + 8, static_cast<int32_t>(static_cast<uint32_t>(return_address)));
      const uint8_t high[] = {0xC7, 0x44, 0x24, 0x04};  // mov dword [rsp+4], imm32
      std::memcpy(out + 12, high, sizeof(high));
      put32(out + 16, static_cast<int32_t>(static_cast<uint32_t>(return_address >> 32)));
      out[20] = 0xE9;
      put32(out + 21, disp);
      written = kLength;
      return RelocateStatus::kOk;
    }
    default: break;
  }
  // jcc: 70+cc rel8 or 0F 80+cc rel32 -> 0F 80+cc rel32. loop*, jrcxz and xbegin have no rel32
  // form with the same meaning.
  if (instruction.meta.category == ZYDIS_CATEGORY_COND_BR) {
    uint8_t cc = 0;
    if (instruction.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && instruction.opcode >= 0x70 && instruction.opcode <= 0x7F) {
      cc = instruction.opcode & 0x0F;
    } else if (instruction.opcode_map == ZYDIS_OPCODE_MAP_0F && instruction.opcode >= 0x80 && instruction.opcode <= 0x8F) {
      cc = instruction.opcode & 0x0F;
    } else {
      return RelocateStatus::kUnsupported;
    }
    if (capacity < 6) return RelocateStatus::kNoRoom;
    if (!rel32(target, to, 6, disp)) return RelocateStatus::kOutOfRange;
    out[0] = 0x0F;
    out[1] = static_cast<uint8_t>(0x80 | cc);
    put32(out + 2, disp);
    written = 6;
    return RelocateStatus::kOk;
  }
  return RelocateStatus::kUnsupported;
}

const char* describe(RelocateStatus status) {
  switch (status) {
    case RelocateStatus::kOk: return "ok";
    case RelocateStatus::kUndecodable: return "the bytes are not an instruction";
    case RelocateStatus::kUnsupported: return "an instruction that cannot be moved (an indirect call, loop, jrcxz or xbegin)";
    case RelocateStatus::kOutOfRange: return "a relative target beyond 2 GiB of the trampoline";
    case RelocateStatus::kNoRoom: return "no room in the trampoline";
  }
  return "unknown";
}

}  // namespace whatif::x86
