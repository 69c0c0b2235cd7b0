// Branch evaluation (see evaluate.h). Signal-safe: arithmetic, and memory read with
// os::read_memory, which cannot fault.
#include "lbr/evaluate.h"

#include <ucontext.h>

#include "os/os.h"

namespace whatif::lbr {
using x86::Condition;
using x86::Operand;
using x86::Transfer;

WHATIF_SIGNAL_SAFE bool condition_holds(Condition condition, uint64_t rflags, uint64_t rcx) {
  bool cf = (rflags & kCarry) != 0, pf = (rflags & kParity) != 0, zf = (rflags & kZero) != 0;
  bool sf = (rflags & kSign) != 0, of = (rflags & kOverflow) != 0;
  switch (condition) {
    case Condition::kO: return of;
    case Condition::kNo: return !of;
    case Condition::kB: return cf;
    case Condition::kAe: return !cf;
    case Condition::kE: return zf;
    case Condition::kNe: return !zf;
    case Condition::kBe: return cf || zf;
    case Condition::kA: return !cf && !zf;
    case Condition::kS: return sf;
    case Condition::kNs: return !sf;
    case Condition::kP: return pf;
    case Condition::kNp: return !pf;
    case Condition::kL: return sf != of;
    case Condition::kGe: return sf == of;
    case Condition::kLe: return zf || sf != of;
    case Condition::kG: return !zf && sf == of;
    case Condition::kLoop: return rcx - 1 != 0;
    case Condition::kLoope: return rcx - 1 != 0 && zf;
    case Condition::kLoopne: return rcx - 1 != 0 && !zf;
    case Condition::kJrcxz: return rcx == 0;
    case Condition::kJecxz: return (rcx & 0xffffffffu) == 0;
    case Condition::kNone: return false;
  }
  return false;
}

namespace {

WHATIF_SIGNAL_SAFE bool operand_target(const Operand& operand, const Registers& registers, uint64_t& target) {
  if (operand.kind == Operand::Kind::kRegister) {
    target = registers.gpr[operand.base];
    return true;
  }
  if (operand.kind != Operand::Kind::kMemory || operand.size != 8) return false;
  uint64_t address = static_cast<uint64_t>(operand.disp);
  if (operand.base != x86::kNoRegister) address += registers.gpr[operand.base];
  if (operand.index != x86::kNoRegister) address += registers.gpr[operand.index] * operand.scale;
  return os::read_memory(address, &target, sizeof(target));
}

}  // namespace

WHATIF_SIGNAL_SAFE Outcome evaluate(const x86::Instruction& instruction, uint64_t address, const Registers& registers) {
  Outcome outcome;
  uint64_t next = address + instruction.length;
  switch (instruction.transfer) {
    case Transfer::kNone:
      outcome = {true, false, next};
      break;
    case Transfer::kJump:
    case Transfer::kCall:
      outcome = {true, true, instruction.target};
      break;
    case Transfer::kConditional: {
      bool taken = condition_holds(instruction.condition, registers.rflags, registers.gpr[1]);
      outcome = {instruction.condition != Condition::kNone, taken, taken ? instruction.target : next};
      break;
    }
    case Transfer::kIndirectJump:
    case Transfer::kIndirectCall:
      outcome.taken = true;
      outcome.ok = operand_target(instruction.operand, registers, outcome.target);
      break;
    case Transfer::kReturn:
      outcome.taken = true;
      outcome.ok = os::read_memory(registers.gpr[x86::kRsp], &outcome.target, sizeof(outcome.target));
      break;
    case Transfer::kOther:
      break;
  }
  return outcome;
}

WHATIF_SIGNAL_SAFE void registers_from_ucontext(const void* ucontext, Registers& out) {
  const auto* context = static_cast<const ucontext_t*>(ucontext);
  const greg_t* g = context->uc_mcontext.gregs;
  // x86's encoding order: rax rcx rdx rbx rsp rbp rsi rdi r8..r15.
  static constexpr int kOrder[x86::kRegisterCount] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                                                      REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                                      REG_R12, REG_R13, REG_R14, REG_R15};
  for (int i = 0; i < x86::kRegisterCount; ++i) out.gpr[i] = static_cast<uint64_t>(g[kOrder[i]]);
  out.rip = static_cast<uint64_t>(g[REG_RIP]);
  out.rflags = static_cast<uint64_t>(g[REG_EFL]);
}

}  // namespace whatif::lbr
