// The Zydis-backed x86-64 decoder: classifies control transfers and resolves direct targets.
// Runs in any context, signal handlers included: Zydis's decoder neither allocates nor locks.
#include "x86/decoder.h"

#include <Zydis/Zydis.h>

#include <new>

namespace whatif::x86 {
namespace {

static_assert(sizeof(ZydisDecoder) <= 64, "Decoder::state_ too small for ZydisDecoder");

const ZydisDecoder* zydis(const unsigned char* state) { return std::launder(reinterpret_cast<const ZydisDecoder*>(state)); }

Transfer classify(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperand& first) {
  bool direct = first.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && first.imm.is_relative;
  switch (instruction.meta.category) {
    case ZYDIS_CATEGORY_COND_BR: return Transfer::kConditional;  // jcc, loop, loope, loopne, jrcxz
    case ZYDIS_CATEGORY_UNCOND_BR: return direct ? Transfer::kJump : Transfer::kIndirectJump;
    case ZYDIS_CATEGORY_CALL: return direct ? Transfer::kCall : Transfer::kIndirectCall;
    case ZYDIS_CATEGORY_RET: return Transfer::kReturn;
    case ZYDIS_CATEGORY_SYSCALL:
    case ZYDIS_CATEGORY_INTERRUPT:
    case ZYDIS_CATEGORY_SYSTEM: return Transfer::kOther;
    default: return instruction.mnemonic == ZYDIS_MNEMONIC_UD2 ? Transfer::kOther : Transfer::kNone;
  }
}

}  // namespace

Decoder::Decoder() {
  ZydisDecoderInit(new (state_) ZydisDecoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

WHATIF_SIGNAL_SAFE Instruction Decoder::decode(const uint8_t* bytes, std::size_t size, uint64_t address) const {
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  Instruction result;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(zydis(state_), bytes, size, &instruction, operands))) return result;
  result.length = instruction.length;
  result.mnemonic = static_cast<uint16_t>(instruction.mnemonic);
  result.transfer = instruction.operand_count_visible > 0 ? classify(instruction, operands[0])
                                                          : classify(instruction, ZydisDecodedOperand{});
  if (result.transfer == Transfer::kJump || result.transfer == Transfer::kConditional || result.transfer == Transfer::kCall) {
    ZyanU64 target = 0;
    if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&instruction, &operands[0], address, &target))) result.target = target;
  }
  return result;
}

}  // namespace whatif::x86
