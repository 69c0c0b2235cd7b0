// Zydis-backed instruction descriptions for the offline stall analysis (see describe.h). Offline
// only: formats text and allocates.
#include "x86/describe.h"

#include <Zydis/Zydis.h>

#include <algorithm>

namespace whatif::x86 {
namespace {

void add(std::vector<uint16_t>& registers, ZydisRegister reg) {
  if (reg == ZYDIS_REGISTER_NONE || reg == ZYDIS_REGISTER_RIP || reg == ZYDIS_REGISTER_EIP) return;
  ZydisRegister wide = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
  if (wide == ZYDIS_REGISTER_NONE) wide = reg;
  auto value = static_cast<uint16_t>(wide);
  if (std::find(registers.begin(), registers.end(), value) == registers.end()) registers.push_back(value);
}

bool is_divide(ZydisMnemonic m) {
  switch (m) {
    case ZYDIS_MNEMONIC_DIV: case ZYDIS_MNEMONIC_IDIV:
    case ZYDIS_MNEMONIC_DIVSD: case ZYDIS_MNEMONIC_DIVSS: case ZYDIS_MNEMONIC_DIVPD: case ZYDIS_MNEMONIC_DIVPS:
    case ZYDIS_MNEMONIC_VDIVSD: case ZYDIS_MNEMONIC_VDIVSS: case ZYDIS_MNEMONIC_VDIVPD: case ZYDIS_MNEMONIC_VDIVPS:
    case ZYDIS_MNEMONIC_SQRTSD: case ZYDIS_MNEMONIC_SQRTSS: case ZYDIS_MNEMONIC_SQRTPD: case ZYDIS_MNEMONIC_SQRTPS:
    case ZYDIS_MNEMONIC_VSQRTSD: case ZYDIS_MNEMONIC_VSQRTSS: case ZYDIS_MNEMONIC_VSQRTPD: case ZYDIS_MNEMONIC_VSQRTPS:
    case ZYDIS_MNEMONIC_FDIV: case ZYDIS_MNEMONIC_FDIVP: case ZYDIS_MNEMONIC_FDIVR: case ZYDIS_MNEMONIC_FSQRT:
      return true;
    default:
      return false;
  }
}

/// "r64", "m32", "i", "rel" or "m" (lea's address): the table's operand kinds.
std::string kind_of(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperand& op) {
  switch (op.type) {
    case ZYDIS_OPERAND_TYPE_REGISTER: {
      ZyanU16 width = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, op.reg.value);
      return "r" + std::to_string(width);
    }
    case ZYDIS_OPERAND_TYPE_MEMORY:
      if (instruction.mnemonic == ZYDIS_MNEMONIC_LEA) return "m";
      return "m" + std::to_string(op.size);
    case ZYDIS_OPERAND_TYPE_IMMEDIATE: return op.imm.is_relative ? "rel" : "i";
    default: return "?";
  }
}

}  // namespace

Description describe(const Decoder& decoder, const uint8_t* bytes, std::size_t size, uint64_t address) {
  Description out;
  out.basic = decoder.decode(bytes, size, address);
  if (out.basic.length == 0) return out;
  ZydisDecoder zydis;
  ZydisDecoderInit(&zydis, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zydis, bytes, size, &instruction, operands))) {
    out.basic.length = 0;
    return out;
  }
  ZydisFormatter formatter;
  ZydisFormatterInit(&formatter, ZYDIS_FORMATTER_STYLE_INTEL);
  char text[256];
  if (ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&formatter, &instruction, operands, instruction.operand_count_visible,
                                                   text, sizeof(text), address, nullptr))) {
    out.text = text;
  }
  out.mnemonic = ZydisMnemonicGetString(instruction.mnemonic);
  if (instruction.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE)) {
    out.mnemonic = "rep " + out.mnemonic;
  }
  out.form = out.mnemonic;
  bool first = true;
  for (ZyanU8 i = 0; i < instruction.operand_count_visible; ++i) {
    out.form += (first ? " " : ",") + kind_of(instruction, operands[i]);
    first = false;
  }
  // A rep string instruction's form is its mnemonic alone ("rep stosb").
  if (out.mnemonic.rfind("rep ", 0) == 0) out.form = out.mnemonic;
  for (ZyanU8 i = 0; i < instruction.operand_count; ++i) {
    const ZydisDecodedOperand& op = operands[i];
    bool reads = (op.actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
    bool writes = (op.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
      if (op.reg.value == ZYDIS_REGISTER_RFLAGS || op.reg.value == ZYDIS_REGISTER_EFLAGS || op.reg.value == ZYDIS_REGISTER_FLAGS) {
        continue;  // flags come from cpu_flags below
      }
      // xor eax, eax and the like break the dependency: they read nothing.
      bool zero_idiom = instruction.operand_count_visible == 2 && operands[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
                        operands[1].type == ZYDIS_OPERAND_TYPE_REGISTER && operands[0].reg.value == operands[1].reg.value &&
                        (instruction.mnemonic == ZYDIS_MNEMONIC_XOR || instruction.mnemonic == ZYDIS_MNEMONIC_SUB ||
                         instruction.mnemonic == ZYDIS_MNEMONIC_PXOR || instruction.mnemonic == ZYDIS_MNEMONIC_XORPS ||
                         instruction.mnemonic == ZYDIS_MNEMONIC_XORPD);
      if (reads && !zero_idiom) add(out.reads, op.reg.value);
      if (writes) add(out.writes, op.reg.value);
    } else if (op.type == ZYDIS_OPERAND_TYPE_MEMORY) {
      add(out.reads, op.mem.base);
      add(out.reads, op.mem.index);
      add(out.address, op.mem.base);
      add(out.address, op.mem.index);
      if (op.mem.type == ZYDIS_MEMOP_TYPE_AGEN) continue;
      out.local_address = op.mem.index == ZYDIS_REGISTER_NONE &&
                          (op.mem.base == ZYDIS_REGISTER_RSP || op.mem.base == ZYDIS_REGISTER_RBP || op.mem.base == ZYDIS_REGISTER_RIP);  // lea computes an address, no access
      if (reads) out.loads = true;
      if (writes) out.stores = true;
    }
  }
  if (instruction.cpu_flags != nullptr) {
    if (instruction.cpu_flags->tested != 0) out.reads.push_back(kFlags);
    if (instruction.cpu_flags->modified != 0 || instruction.cpu_flags->set_0 != 0 || instruction.cpu_flags->set_1 != 0 ||
        instruction.cpu_flags->undefined != 0) {
      out.writes.push_back(kFlags);
    }
  }
  out.divides = is_divide(instruction.mnemonic);
  return out;
}

}  // namespace whatif::x86
