// The Zydis-backed x86-64 decoder: classifies control transfers and resolves direct targets.
// Runs in any context, signal handlers included: Zydis's decoder neither allocates nor locks.
#include "x86/decoder.h"

#include <Zydis/Zydis.h>

#include <new>

namespace whatif::x86 {

static_assert(kFlagCF == ZYDIS_CPUFLAG_CF && kFlagPF == ZYDIS_CPUFLAG_PF && kFlagAF == ZYDIS_CPUFLAG_AF &&
              kFlagZF == ZYDIS_CPUFLAG_ZF && kFlagSF == ZYDIS_CPUFLAG_SF && kFlagOF == ZYDIS_CPUFLAG_OF);
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

Condition condition_of(ZydisMnemonic mnemonic) {
  switch (mnemonic) {
    case ZYDIS_MNEMONIC_JO: return Condition::kO;
    case ZYDIS_MNEMONIC_JNO: return Condition::kNo;
    case ZYDIS_MNEMONIC_JB: return Condition::kB;
    case ZYDIS_MNEMONIC_JNB: return Condition::kAe;
    case ZYDIS_MNEMONIC_JZ: return Condition::kE;
    case ZYDIS_MNEMONIC_JNZ: return Condition::kNe;
    case ZYDIS_MNEMONIC_JBE: return Condition::kBe;
    case ZYDIS_MNEMONIC_JNBE: return Condition::kA;
    case ZYDIS_MNEMONIC_JS: return Condition::kS;
    case ZYDIS_MNEMONIC_JNS: return Condition::kNs;
    case ZYDIS_MNEMONIC_JP: return Condition::kP;
    case ZYDIS_MNEMONIC_JNP: return Condition::kNp;
    case ZYDIS_MNEMONIC_JL: return Condition::kL;
    case ZYDIS_MNEMONIC_JNL: return Condition::kGe;
    case ZYDIS_MNEMONIC_JLE: return Condition::kLe;
    case ZYDIS_MNEMONIC_JNLE: return Condition::kG;
    case ZYDIS_MNEMONIC_LOOP: return Condition::kLoop;
    case ZYDIS_MNEMONIC_LOOPE: return Condition::kLoope;
    case ZYDIS_MNEMONIC_LOOPNE: return Condition::kLoopne;
    case ZYDIS_MNEMONIC_JRCXZ: return Condition::kJrcxz;
    case ZYDIS_MNEMONIC_JECXZ: return Condition::kJecxz;
    default: return Condition::kNone;
  }
}

/// A 64-bit general-purpose register's number (rax=0 .. r15=15), or kNoRegister.
int8_t gpr_number(ZydisRegister reg) {
  if (reg == ZYDIS_REGISTER_NONE || ZydisRegisterGetClass(reg) != ZYDIS_REGCLASS_GPR64) return kNoRegister;
  return static_cast<int8_t>(ZydisRegisterGetId(reg));
}

Operand operand_of(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperand& operand, uint64_t address) {
  Operand result;
  if (operand.type == ZYDIS_OPERAND_TYPE_REGISTER) {
    result.base = gpr_number(operand.reg.value);
    result.kind = result.base == kNoRegister ? Operand::Kind::kUnsupported : Operand::Kind::kRegister;
    return result;
  }
  if (operand.type != ZYDIS_OPERAND_TYPE_MEMORY) {
    result.kind = Operand::Kind::kUnsupported;
    return result;
  }
  const auto& mem = operand.mem;
  result.kind = Operand::Kind::kUnsupported;
  if (mem.segment == ZYDIS_REGISTER_FS || mem.segment == ZYDIS_REGISTER_GS) return result;
  if (instruction.address_width != 64) return result;
  result.size = static_cast<uint8_t>(operand.size / 8);
  result.disp = mem.disp.has_displacement ? mem.disp.value : 0;
  if (mem.base == ZYDIS_REGISTER_RIP) {
    result.disp += static_cast<int64_t>(address + instruction.length);
  } else if (mem.base != ZYDIS_REGISTER_NONE) {
    result.base = gpr_number(mem.base);
    if (result.base == kNoRegister) return result;
  }
  if (mem.index != ZYDIS_REGISTER_NONE) {
    result.index = gpr_number(mem.index);
    if (result.index == kNoRegister) return result;
    result.scale = mem.scale;
  }
  result.kind = Operand::Kind::kMemory;
  return result;
}

/// Fills stack_delta / stack_unknown for an instruction that does not transfer control.
void stack_effect(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperand* operands, Instruction& result) {
  bool writes_rsp = false;
  for (ZyanU8 i = 0; i < instruction.operand_count; ++i) {
    const ZydisDecodedOperand& operand = operands[i];
    if (operand.type == ZYDIS_OPERAND_TYPE_REGISTER && (operand.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0 &&
        (operand.reg.value == ZYDIS_REGISTER_RSP || operand.reg.value == ZYDIS_REGISTER_ESP ||
         operand.reg.value == ZYDIS_REGISTER_SP || operand.reg.value == ZYDIS_REGISTER_SPL)) {
      writes_rsp = true;
    }
  }
  if (!writes_rsp) return;
  int32_t width = instruction.operand_width / 8;
  switch (instruction.mnemonic) {
    case ZYDIS_MNEMONIC_PUSH:
    case ZYDIS_MNEMONIC_PUSHFQ: result.stack_delta = -(width == 2 ? 2 : 8); return;
    case ZYDIS_MNEMONIC_POP:
    case ZYDIS_MNEMONIC_POPFQ:
      // pop %rsp loads rsp itself
      if (operands[0].type == ZYDIS_OPERAND_TYPE_REGISTER && operands[0].reg.value == ZYDIS_REGISTER_RSP) break;
      result.stack_delta = width == 2 ? 2 : 8;
      return;
    case ZYDIS_MNEMONIC_ADD:
    case ZYDIS_MNEMONIC_SUB:
      if (operands[0].type == ZYDIS_OPERAND_TYPE_REGISTER && operands[0].reg.value == ZYDIS_REGISTER_RSP &&
          operands[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
        auto value = static_cast<int32_t>(operands[1].imm.value.s);
        result.stack_delta = instruction.mnemonic == ZYDIS_MNEMONIC_ADD ? value : -value;
        return;
      }
      break;
    case ZYDIS_MNEMONIC_LEA:
      if (operands[0].reg.value == ZYDIS_REGISTER_RSP && operands[1].mem.base == ZYDIS_REGISTER_RSP &&
          operands[1].mem.index == ZYDIS_REGISTER_NONE) {
        result.stack_delta = static_cast<int32_t>(operands[1].mem.disp.value);
        return;
      }
      break;
    default: break;
  }
  result.stack_unknown = true;
}

}  // namespace

Decoder::Decoder() {
  ZydisDecoderInit(new (state_) ZydisDecoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

namespace {

constexpr uint64_t kArithmeticFlags = ZYDIS_CPUFLAG_CF | ZYDIS_CPUFLAG_PF | ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_ZF |
                                      ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_OF;

uint64_t width_mask(unsigned bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

/// The bit of `reg`'s whole general-purpose register (KnownState::known, Instruction's register
/// masks), or 0 when it is not one (flags, rip, vector registers).
uint16_t gpr_bit(ZydisRegister reg) {
  ZydisRegister full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
  if (ZydisRegisterGetClass(full) != ZYDIS_REGCLASS_GPR64) return 0;
  return static_cast<uint16_t>(1u << ZydisRegisterGetId(full));
}

/// A register operand's GPR number and width, or false for high-byte and non-GPR registers.
bool gpr_of(ZydisRegister reg, int& number, unsigned& bits) {
  ZydisRegisterClass cls = ZydisRegisterGetClass(reg);
  if (cls != ZYDIS_REGCLASS_GPR64 && cls != ZYDIS_REGCLASS_GPR32 && cls != ZYDIS_REGCLASS_GPR16 && cls != ZYDIS_REGCLASS_GPR8) return false;
  if (reg == ZYDIS_REGISTER_AH || reg == ZYDIS_REGISTER_BH || reg == ZYDIS_REGISTER_CH || reg == ZYDIS_REGISTER_DH) return false;
  ZydisRegister full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
  number = ZydisRegisterGetId(full);
  bits = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, reg);
  return number >= 0 && number < kRegisterCount;
}

/// An operand's value when known: a known register or an immediate.
bool read_operand(const ZydisDecodedOperand& operand, const KnownState& state, unsigned bits, uint64_t& value) {
  if (operand.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
    value = operand.imm.value.u & width_mask(bits);
    return true;
  }
  int number = 0;
  unsigned width = 0;
  if (operand.type != ZYDIS_OPERAND_TYPE_REGISTER || !gpr_of(operand.reg.value, number, width) || !state.is_known(number)) {
    return false;
  }
  value = state.value[number] & width_mask(width);
  return true;
}

/// Writes `value` (`bits` wide) to a register operand: 32-bit writes zero-extend, 8/16-bit ones
/// merge into a known old value.
void write_register(const ZydisDecodedOperand& operand, KnownState& state, uint64_t value, bool was_known, uint64_t old) {
  int number = 0;
  unsigned bits = 0;
  if (!gpr_of(operand.reg.value, number, bits)) return;
  if (bits == 64 || bits == 32) {
    state.value[number] = value & width_mask(bits);
  } else if (was_known) {
    state.value[number] = (old & ~width_mask(bits)) | (value & width_mask(bits));
  } else {
    return;
  }
  state.known = static_cast<uint16_t>(state.known | (1u << number));
}

void set_flags(KnownState& state, uint64_t result, unsigned bits, bool carry, bool overflow) {
  uint64_t r = result & width_mask(bits);
  uint64_t flags = 0;
  if (carry) flags |= ZYDIS_CPUFLAG_CF;
  if (overflow) flags |= ZYDIS_CPUFLAG_OF;
  if (r == 0) flags |= ZYDIS_CPUFLAG_ZF;
  if ((r >> (bits - 1)) & 1) flags |= ZYDIS_CPUFLAG_SF;
  if ((__builtin_popcount(static_cast<unsigned>(r & 0xff)) & 1) == 0) flags |= ZYDIS_CPUFLAG_PF;
  state.rflags = flags;
  state.flags_known = true;
}

Instruction describe_transfer(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperand* operands, uint64_t address);

void apply(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperand* operands, uint64_t address, KnownState& state) {
  KnownState before = state;
  // First forget everything the instruction writes (explicit and hidden operands, flags).
  for (ZyanU8 i = 0; i < instruction.operand_count; ++i) {
    const ZydisDecodedOperand& operand = operands[i];
    if (operand.type != ZYDIS_OPERAND_TYPE_REGISTER || (operand.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) == 0) continue;
    state.known = static_cast<uint16_t>(state.known & ~gpr_bit(operand.reg.value));
  }
  if (instruction.cpu_flags != nullptr &&
      ((instruction.cpu_flags->modified | instruction.cpu_flags->set_0 | instruction.cpu_flags->set_1 |
        instruction.cpu_flags->undefined) & kArithmeticFlags) != 0) {
    state.flags_known = false;
  }
  if (instruction.operand_count_visible == 0) return;
  const ZydisDecodedOperand& destination = operands[0];
  unsigned bits = instruction.operand_width;
  if (bits == 0 || bits > 64) return;
  int number = 0;
  unsigned width = 0;
  bool destination_is_gpr = destination.type == ZYDIS_OPERAND_TYPE_REGISTER && gpr_of(destination.reg.value, number, width);
  bool old_known = destination_is_gpr && before.is_known(number);
  uint64_t old = destination_is_gpr ? before.value[number] : 0;
  uint64_t a = 0, b = 0;
  switch (instruction.mnemonic) {
    case ZYDIS_MNEMONIC_PUSH:
    case ZYDIS_MNEMONIC_POP:
      // rsp moves by the operand size; a popped register comes from memory and stays unknown.
      if (before.is_known(kRsp)) {
        int64_t delta = instruction.mnemonic == ZYDIS_MNEMONIC_PUSH ? -static_cast<int64_t>(bits / 8) : static_cast<int64_t>(bits / 8);
        if (!(instruction.mnemonic == ZYDIS_MNEMONIC_POP && destination_is_gpr && number == kRsp)) {
          state.value[kRsp] = before.value[kRsp] + static_cast<uint64_t>(delta);
          state.known = static_cast<uint16_t>(state.known | (1u << kRsp));
        }
      }
      return;
    case ZYDIS_MNEMONIC_MOV:
      if (destination_is_gpr && instruction.operand_count_visible == 2 && read_operand(operands[1], before, bits, a)) {
        write_register(destination, state, a, old_known, old);
      }
      return;
    case ZYDIS_MNEMONIC_LEA: {
      if (!destination_is_gpr || operands[1].type != ZYDIS_OPERAND_TYPE_MEMORY) return;
      const auto& mem = operands[1].mem;
      uint64_t value = static_cast<uint64_t>(mem.disp.has_displacement ? mem.disp.value : 0);
      if (mem.base == ZYDIS_REGISTER_RIP) {
        value += address + instruction.length;
      } else if (mem.base != ZYDIS_REGISTER_NONE) {
        int base = 0;
        unsigned base_bits = 0;
        if (!gpr_of(mem.base, base, base_bits) || base_bits != 64 || !before.is_known(base)) return;
        value += before.value[base];
      }
      if (mem.index != ZYDIS_REGISTER_NONE) {
        int index = 0;
        unsigned index_bits = 0;
        if (!gpr_of(mem.index, index, index_bits) || index_bits != 64 || !before.is_known(index)) return;
        value += before.value[index] * mem.scale;
      }
      write_register(destination, state, value, old_known, old);
      return;
    }
    case ZYDIS_MNEMONIC_XOR:
    case ZYDIS_MNEMONIC_SUB:
      // xor r,r and sub r,r clear r whatever it held.
      if (destination_is_gpr && operands[1].type == ZYDIS_OPERAND_TYPE_REGISTER && operands[1].reg.value == destination.reg.value) {
        write_register(destination, state, 0, old_known, old);
        set_flags(state, 0, bits, false, false);
        return;
      }
      [[fallthrough]];
    case ZYDIS_MNEMONIC_ADD:
    case ZYDIS_MNEMONIC_CMP:
    case ZYDIS_MNEMONIC_AND:
    case ZYDIS_MNEMONIC_OR:
    case ZYDIS_MNEMONIC_TEST: {
      if (!destination_is_gpr || instruction.operand_count_visible < 2 || !read_operand(destination, before, bits, a) ||
          !read_operand(operands[1], before, bits, b)) {
        return;
      }
      uint64_t mask = width_mask(bits), sign = 1ull << (bits - 1), r = 0;
      bool carry = false, overflow = false;
      switch (instruction.mnemonic) {
        case ZYDIS_MNEMONIC_ADD:
          r = (a + b) & mask;
          carry = r < a;
          overflow = ((a ^ r) & (b ^ r) & sign) != 0;
          break;
        case ZYDIS_MNEMONIC_SUB:
        case ZYDIS_MNEMONIC_CMP:
          r = (a - b) & mask;
          carry = a < b;
          overflow = ((a ^ b) & (a ^ r) & sign) != 0;
          break;
        case ZYDIS_MNEMONIC_AND:
        case ZYDIS_MNEMONIC_TEST: r = a & b; break;
        case ZYDIS_MNEMONIC_OR: r = a | b; break;
        default: r = a ^ b; break;
      }
      set_flags(state, r, bits, carry, overflow);
      if (instruction.mnemonic != ZYDIS_MNEMONIC_CMP && instruction.mnemonic != ZYDIS_MNEMONIC_TEST) {
        write_register(destination, state, r, old_known, old);
      }
      return;
    }
    case ZYDIS_MNEMONIC_INC:
    case ZYDIS_MNEMONIC_DEC: {
      // CF is left as it was: the flags stay exact only if they were.
      if (!destination_is_gpr || !read_operand(destination, before, bits, a)) return;
      uint64_t mask = width_mask(bits), sign = 1ull << (bits - 1);
      uint64_t r = instruction.mnemonic == ZYDIS_MNEMONIC_INC ? (a + 1) & mask : (a - 1) & mask;
      bool overflow = instruction.mnemonic == ZYDIS_MNEMONIC_INC ? r == sign : a == sign;
      write_register(destination, state, r, old_known, old);
      if (before.flags_known) {
        bool carry = (before.rflags & ZYDIS_CPUFLAG_CF) != 0;
        set_flags(state, r, bits, carry, overflow);
      }
      return;
    }
    default: return;
  }
}

}  // namespace

WHATIF_SIGNAL_SAFE Instruction Decoder::step(const uint8_t* bytes, std::size_t size, uint64_t address, KnownState& state) const {
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(zydis(state_), bytes, size, &instruction, operands))) return Instruction{};
  Instruction result = describe_transfer(instruction, operands, address);
  if (result.transfer == Transfer::kNone) apply(instruction, operands, address, state);
  return result;
}

WHATIF_SIGNAL_SAFE Instruction Decoder::decode(const uint8_t* bytes, std::size_t size, uint64_t address) const {
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(zydis(state_), bytes, size, &instruction, operands))) return Instruction{};
  return describe_transfer(instruction, operands, address);
}

namespace {
WHATIF_SIGNAL_SAFE Instruction describe_transfer(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperand* operands,
                                        uint64_t address) {
  Instruction result;
  result.length = instruction.length;
  result.mnemonic = static_cast<uint16_t>(instruction.mnemonic);
  if (const ZydisAccessedFlags* flags = instruction.cpu_flags; flags != nullptr) {
    constexpr uint32_t kStatus = kFlagCF | kFlagPF | kFlagAF | kFlagZF | kFlagSF | kFlagOF;
    result.flags_read = flags->tested & kStatus;
    result.flags_written = (flags->modified | flags->set_0 | flags->set_1 | flags->undefined) & kStatus;
  }
  for (ZyanU8 i = 0; i < instruction.operand_count; ++i) {
    const ZydisDecodedOperand& operand = operands[i];
    if (operand.type == ZYDIS_OPERAND_TYPE_REGISTER && (operand.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0) {
      result.registers_written = static_cast<uint16_t>(result.registers_written | gpr_bit(operand.reg.value));
    }
    if (operand.type != ZYDIS_OPERAND_TYPE_MEMORY || operand.mem.type == ZYDIS_MEMOP_TYPE_AGEN) continue;
    result.reads_memory = result.reads_memory || (operand.actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
    result.writes_memory = result.writes_memory || (operand.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    result.address_registers = static_cast<uint16_t>(result.address_registers | gpr_bit(operand.mem.base) |
                                                     gpr_bit(operand.mem.index));
  }
  result.transfer = instruction.operand_count_visible > 0 ? classify(instruction, operands[0])
                                                          : classify(instruction, ZydisDecodedOperand{});
  if (result.transfer == Transfer::kNone) stack_effect(instruction, operands, result);
  if (result.transfer == Transfer::kConditional) result.condition = condition_of(instruction.mnemonic);
  if ((result.transfer == Transfer::kIndirectJump || result.transfer == Transfer::kIndirectCall) &&
      instruction.operand_count_visible > 0) {
    result.operand = operand_of(instruction, operands[0], address);
  }
  if (result.transfer == Transfer::kJump || result.transfer == Transfer::kConditional || result.transfer == Transfer::kCall) {
    ZyanU64 target = 0;
    if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&instruction, &operands[0], address, &target))) result.target = target;
  }
  return result;
}
}  // namespace

}  // namespace whatif::x86
