// Branch evaluation against a register file: whether a conditional branch is taken and where an
// indirect transfer or a return goes, from the flags, the registers and memory read without
// faulting. Pure and signal-safe: the tracer calls it in its SIGTRAP handler, tests on fixtures.
#pragma once
#include <cstdint>

#include "base/signal_safe.h"
#include "x86/decoder.h"

namespace whatif::lbr {

/// The machine-independent CPU state a branch is evaluated against: general registers in x86's
/// encoding order (x86::kRegisterCount), the program counter and RFLAGS.
struct Registers {
  uint64_t gpr[x86::kRegisterCount] = {};
  uint64_t rip = 0;
  uint64_t rflags = 0;
};

/// RFLAGS bits the conditions read.
inline constexpr uint64_t kCarry = 1u << 0, kParity = 1u << 2, kZero = 1u << 6, kSign = 1u << 7, kOverflow = 1u << 11;

/// Whether `condition` holds in the state before the branch executes. loop* decrement rcx first,
/// so they see rcx - 1.
WHATIF_SIGNAL_SAFE bool condition_holds(x86::Condition condition, uint64_t rflags, uint64_t rcx);

struct Outcome {
  bool ok = false;     ///< false: the operand is unsupported or its memory unreadable
  bool taken = false;  ///< the branch transfers control (always, except a failed condition)
  uint64_t target = 0; ///< where control goes next (the fall-through when not taken)
};

/// Evaluates the transfer `instruction` at `address` in state `registers` (taken before it runs).
/// Memory (indirect targets, return addresses) is read with os::read_memory.
WHATIF_SIGNAL_SAFE Outcome evaluate(const x86::Instruction& instruction, uint64_t address, const Registers& registers);

/// Fills `out` from a signal handler's ucontext_t.
WHATIF_SIGNAL_SAFE void registers_from_ucontext(const void* ucontext, Registers& out);

}  // namespace whatif::lbr
