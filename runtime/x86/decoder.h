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

/// What a kConditional transfer tests: one of the sixteen x86 condition codes on RFLAGS, or a
/// count in rcx/ecx (loop*, jrcxz, jecxz).
enum class Condition : uint8_t {
  kNone,
  kO, kNo, kB, kAe, kE, kNe, kBe, kA, kS, kNs, kP, kNp, kL, kGe, kLe, kG,
  kLoop, kLoope, kLoopne, kJrcxz, kJecxz,
};

/// General-purpose registers in the hardware's encoding order (rax=0, rcx, rdx, rbx, rsp, rbp,
/// rsi, rdi, r8..r15=15): the index into a machine-independent register file.
inline constexpr int kRegisterCount = 16;
inline constexpr int kRsp = 4;
inline constexpr int kNoRegister = -1;

/// Where an indirect transfer finds its target, in a machine-independent form evaluated later
/// against any register file: a register, or a memory word at base + index * scale + disp.
/// RIP-relative memory is folded into disp (base kNoRegister). Segment-relative (fs/gs) and
/// 32-bit addressing are not representable: kind kUnsupported.
struct Operand {
  enum class Kind : uint8_t { kNone, kRegister, kMemory, kUnsupported };
  Kind kind = Kind::kNone;
  int8_t base = kNoRegister;
  int8_t index = kNoRegister;
  uint8_t scale = 0;
  uint8_t size = 8;  ///< bytes of the loaded target (memory)
  int64_t disp = 0;
};

/// One decoded instruction.
struct Instruction {
  uint8_t length = 0;          ///< bytes; 0 when the bytes are not a valid instruction
  Transfer transfer = Transfer::kNone;
  Condition condition = Condition::kNone;  ///< for kConditional
  uint64_t target = 0;         ///< absolute target for kJump, kConditional and kCall
  uint16_t mnemonic = 0;       ///< Zydis's ZydisMnemonic, for callers that need the exact kind
  Operand operand;             ///< for kIndirectJump and kIndirectCall
  /// How a non-transfer instruction moves rsp: push/pop/pushf/popf, add/sub rsp with an
  /// immediate, lea rsp,[rsp+disp]. stack_unknown when it writes rsp any other way.
  int32_t stack_delta = 0;
  bool stack_unknown = false;
  /// Status flags (kFlag* bits) the instruction reads, and those it sets, clears or leaves undefined.
  uint32_t flags_read = 0;
  uint32_t flags_written = 0;
  /// Whether it reads or writes memory through an explicit or implicit memory operand (push and
  /// pop included; lea's address computation is not an access).
  bool reads_memory = false;
  bool writes_memory = false;
  /// General-purpose registers (bit i: encoding i, kRegisterCount of them) it writes, in whole or
  /// in part, and those its memory accesses address through (base and index).
  uint16_t registers_written = 0;
  uint16_t address_registers = 0;
};

/// Status-flag bits of Instruction::flags_read and flags_written (RFLAGS' own bit positions).
inline constexpr uint32_t kFlagCF = 1u << 0;
inline constexpr uint32_t kFlagPF = 1u << 2;
inline constexpr uint32_t kFlagAF = 1u << 4;
inline constexpr uint32_t kFlagZF = 1u << 6;
inline constexpr uint32_t kFlagSF = 1u << 7;
inline constexpr uint32_t kFlagOF = 1u << 11;

/// Register values and flags known exactly at a point of a path, propagated forward from a stop
/// where the whole register file was read (the branch tracer's data flow, paper §3.3).
struct KnownState {
  uint64_t value[kRegisterCount] = {};
  uint16_t known = 0;        ///< bit i: value[i] is exact
  uint64_t rflags = 0;       ///< CF PF ZF SF OF, exact when flags_known
  bool flags_known = false;
  bool is_known(int reg) const { return (known >> reg) & 1; }
};

/// A decoder for 64-bit code. Construct once; decode() is const and may be called concurrently.
class Decoder {
 public:
  Decoder();
  /// Decodes the instruction in `bytes` (at most `size` bytes readable) that lives at `address`.
  /// Returns length 0 for bytes that do not decode.
  WHATIF_SIGNAL_SAFE Instruction decode(const uint8_t* bytes, std::size_t size, uint64_t address) const;
  /// Decodes like decode() and, for an instruction that does not transfer control, applies it to
  /// `state`: mov, lea, add, sub, cmp, test, and, or, xor, inc, dec, push and pop compute exact
  /// results (and flags) from known register and immediate inputs; anything else forgets the
  /// registers and flags it writes. Loads from memory are never known.
  WHATIF_SIGNAL_SAFE Instruction step(const uint8_t* bytes, std::size_t size, uint64_t address, KnownState& state) const;

 private:
  alignas(8) unsigned char state_[64];  // a ZydisDecoder, kept opaque so Zydis stays out of headers
};

}  // namespace whatif::x86
