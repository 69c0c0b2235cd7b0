// Branch evaluation (runtime/lbr/evaluate.h) on hand-assembled fixture instructions: every
// conditional jump on every flag combination, jmp/call through registers and memory, ret, loop,
// loope/loopne and jrcxz/jecxz. Memory operands point at real words of this process.
#include "lbr/evaluate.h"

#include <gtest/gtest.h>

#include <vector>

#include "lbr/tracer.h"
#include "x86/decoder.h"

namespace whatif::lbr {
namespace {
using x86::Condition;

constexpr uint64_t kAt = 0x401000;

x86::Instruction decode(std::vector<uint8_t> bytes) { return x86::Decoder().decode(bytes.data(), bytes.size(), kAt); }

/// The reference: each condition spelled out from the Intel SDM's definitions.
bool reference(uint8_t code, bool cf, bool pf, bool zf, bool sf, bool of) {
  bool result = false;
  switch (code >> 1) {
    case 0: result = of; break;
    case 1: result = cf; break;
    case 2: result = zf; break;
    case 3: result = cf || zf; break;
    case 4: result = sf; break;
    case 5: result = pf; break;
    case 6: result = sf != of; break;
    case 7: result = zf || sf != of; break;
  }
  return (code & 1) != 0 ? !result : result;
}

TEST(LbrEvaluate, EveryConditionalJumpOnEveryFlagCombination) {
  for (uint8_t code = 0; code < 16; ++code) {
    // Both encodings: jcc rel8 (0x70+cc) and jcc rel32 (0x0f 0x80+cc).
    for (const auto& bytes : {std::vector<uint8_t>{static_cast<uint8_t>(0x70 + code), 0x10},
                              std::vector<uint8_t>{0x0f, static_cast<uint8_t>(0x80 + code), 0x10, 0, 0, 0}}) {
      x86::Instruction jcc = decode(bytes);
      ASSERT_EQ(jcc.transfer, x86::Transfer::kConditional);
      ASSERT_NE(jcc.condition, Condition::kNone);
      for (int flags = 0; flags < 32; ++flags) {
        bool cf = flags & 1, pf = flags & 2, zf = flags & 4, sf = flags & 8, of = flags & 16;
        Registers registers;
        registers.rflags = (cf ? kCarry : 0) | (pf ? kParity : 0) | (zf ? kZero : 0) | (sf ? kSign : 0) | (of ? kOverflow : 0) | 0x202;
        Outcome outcome = evaluate(jcc, kAt, registers);
        ASSERT_TRUE(outcome.ok);
        bool expected = reference(code, cf, pf, zf, sf, of);
        EXPECT_EQ(outcome.taken, expected) << "cc " << int(code) << " flags " << flags;
        EXPECT_EQ(outcome.target, expected ? kAt + bytes.size() + 0x10 : kAt + bytes.size());
      }
    }
  }
}

TEST(LbrEvaluate, LoopDecrementsRcxBeforeTesting) {
  x86::Instruction loop = decode({0xe2, 0xfe});  // loop to itself
  Registers registers;
  registers.gpr[1] = 2;  // rcx
  EXPECT_TRUE(evaluate(loop, kAt, registers).taken);
  registers.gpr[1] = 1;  // the last iteration falls through
  Outcome last = evaluate(loop, kAt, registers);
  EXPECT_FALSE(last.taken);
  EXPECT_EQ(last.target, kAt + 2);
  x86::Instruction loope = decode({0xe1, 0xfe});
  x86::Instruction loopne = decode({0xe0, 0xfe});
  registers.gpr[1] = 5;
  registers.rflags = kZero;
  EXPECT_TRUE(evaluate(loope, kAt, registers).taken);
  EXPECT_FALSE(evaluate(loopne, kAt, registers).taken);
  registers.rflags = 0;
  EXPECT_FALSE(evaluate(loope, kAt, registers).taken);
  EXPECT_TRUE(evaluate(loopne, kAt, registers).taken);
}

TEST(LbrEvaluate, JrcxzAndJecxzTestTheCount) {
  x86::Instruction jrcxz = decode({0xe3, 0x10});
  x86::Instruction jecxz = decode({0x67, 0xe3, 0x10});
  ASSERT_EQ(jrcxz.condition, Condition::kJrcxz);
  ASSERT_EQ(jecxz.condition, Condition::kJecxz);
  Registers registers;
  registers.gpr[1] = 0;
  EXPECT_TRUE(evaluate(jrcxz, kAt, registers).taken);
  EXPECT_EQ(evaluate(jrcxz, kAt, registers).target, kAt + 2 + 0x10);
  registers.gpr[1] = 1ull << 32;  // ecx is zero, rcx is not
  EXPECT_FALSE(evaluate(jrcxz, kAt, registers).taken);
  EXPECT_TRUE(evaluate(jecxz, kAt, registers).taken);
}

TEST(LbrEvaluate, JumpsAndCallsThroughRegisters) {
  Registers registers;
  registers.gpr[0] = 0x1234;   // rax
  registers.gpr[11] = 0x5678;  // r11
  Outcome call = evaluate(decode({0xff, 0xd0}), kAt, registers);  // call *%rax
  EXPECT_TRUE(call.ok && call.taken);
  EXPECT_EQ(call.target, 0x1234u);
  Outcome jmp = evaluate(decode({0x41, 0xff, 0xe3}), kAt, registers);  // jmp *%r11
  EXPECT_TRUE(jmp.ok && jmp.taken);
  EXPECT_EQ(jmp.target, 0x5678u);
}

TEST(LbrEvaluate, JumpsAndCallsThroughMemory) {
  static uint64_t table[4] = {0x1111, 0x2222, 0x3333, 0x4444};
  Registers registers;
  registers.gpr[3] = reinterpret_cast<uint64_t>(&table[0]);  // rbx
  registers.gpr[0] = 2;                                       // rax
  // call *0x8(%rbx)
  Outcome call = evaluate(decode({0xff, 0x53, 0x08}), kAt, registers);
  EXPECT_TRUE(call.ok);
  EXPECT_EQ(call.target, 0x2222u);
  // jmp *(%rbx,%rax,8)
  Outcome jmp = evaluate(decode({0xff, 0x24, 0xc3}), kAt, registers);
  EXPECT_TRUE(jmp.ok);
  EXPECT_EQ(jmp.target, 0x3333u);
  // jmp *disp32(%rip): the slot is at next instruction + disp; place the instruction so it hits table[3].
  uint64_t at = reinterpret_cast<uint64_t>(&table[3]) - 6 - 0x10;
  std::vector<uint8_t> bytes = {0xff, 0x25, 0x10, 0x00, 0x00, 0x00};
  x86::Instruction rip_relative = x86::Decoder().decode(bytes.data(), bytes.size(), at);
  Outcome plt = evaluate(rip_relative, at, registers);
  EXPECT_TRUE(plt.ok);
  EXPECT_EQ(plt.target, 0x4444u);
}

TEST(LbrEvaluate, UnreadableOrUnsupportedTargetsFailCleanly) {
  Registers registers;
  registers.gpr[0] = 8;  // rax points at page zero: unreadable, and the load must not fault
  EXPECT_FALSE(evaluate(decode({0xff, 0x10}), kAt, registers).ok);  // call *(%rax)
  // jmp *%fs:0x28 : segment-relative, not representable
  EXPECT_FALSE(evaluate(decode({0x64, 0xff, 0x24, 0x25, 0x28, 0x00, 0x00, 0x00}), kAt, registers).ok);
}

TEST(LbrEvaluate, ReturnReadsTheTopOfTheStack) {
  uint64_t stack[2] = {0xabcdef, 0};
  Registers registers;
  registers.gpr[x86::kRsp] = reinterpret_cast<uint64_t>(&stack[0]);
  Outcome ret = evaluate(decode({0xc3}), kAt, registers);
  EXPECT_TRUE(ret.ok && ret.taken);
  EXPECT_EQ(ret.target, 0xabcdefu);
}

TEST(LbrEvaluate, DirectTransfersNeedNoState) {
  Registers registers;
  Outcome jmp = evaluate(decode({0xeb, 0x10}), kAt, registers);
  EXPECT_TRUE(jmp.ok && jmp.taken);
  EXPECT_EQ(jmp.target, kAt + 2 + 0x10);
  Outcome call = evaluate(decode({0xe8, 0x00, 0x01, 0x00, 0x00}), kAt, registers);
  EXPECT_EQ(call.target, kAt + 5 + 0x100);
}

TEST(LbrStackEffect, PushPopAndStackAdjustmentsAreTracked) {
  EXPECT_EQ(decode({0x55}).stack_delta, -8);                     // push %rbp
  EXPECT_EQ(decode({0x5d}).stack_delta, 8);                      // pop %rbp
  EXPECT_EQ(decode({0x48, 0x83, 0xec, 0x20}).stack_delta, -32);  // sub $0x20,%rsp
  EXPECT_EQ(decode({0x48, 0x83, 0xc4, 0x20}).stack_delta, 32);   // add $0x20,%rsp
  EXPECT_EQ(decode({0x48, 0x8d, 0x64, 0x24, 0x08}).stack_delta, 8);  // lea 0x8(%rsp),%rsp
  EXPECT_FALSE(decode({0x48, 0x89, 0xc3}).stack_unknown);       // mov %rax,%rbx
  EXPECT_TRUE(decode({0x48, 0x89, 0xec}).stack_unknown);        // mov %rbp,%rsp
  EXPECT_TRUE(decode({0xc9}).stack_unknown);                    // leave
}

TEST(LbrContext, TheStopMustBeInTheExpectedFrame) {
  EXPECT_TRUE(same_context(0x7000, true, 0x7000));
  EXPECT_FALSE(same_context(0x7000, true, 0x6ff8));
  // Unknown: a signal handler's frame lies far below; the same activation a little around.
  EXPECT_TRUE(same_context(0x70000, false, 0x70000 + 0x40));
  EXPECT_TRUE(same_context(0x70000, false, 0x70000 - 0x20));
  EXPECT_FALSE(same_context(0x70000, false, 0x70000 - 0x800));
}

}  // namespace
}  // namespace whatif::lbr

namespace whatif::lbr {
namespace {

/// Steps `bytes` (one instruction) through the data flow.
void step(x86::KnownState& state, std::vector<uint8_t> bytes) {
  x86::Decoder().step(bytes.data(), bytes.size(), kAt, state);
}

bool jumps(const x86::KnownState& state, std::vector<uint8_t> jcc) {
  return condition_holds(decode(jcc).condition, state.rflags, state.value[1]);
}

TEST(LbrDataFlow, CmpAndTestOnKnownRegistersSettleTheFlags) {
  x86::KnownState state;
  step(state, {0xb9, 0x05, 0x00, 0x00, 0x00});  // mov $5,%ecx
  ASSERT_TRUE(state.is_known(1));
  EXPECT_EQ(state.value[1], 5u);
  step(state, {0x48, 0x83, 0xf9, 0x05});  // cmp $5,%rcx
  ASSERT_TRUE(state.flags_known);
  EXPECT_TRUE(jumps(state, {0x74, 0x00}));   // je
  EXPECT_FALSE(jumps(state, {0x72, 0x00}));  // jb
  step(state, {0x48, 0x83, 0xf9, 0x07});  // cmp $7,%rcx: 5 < 7
  EXPECT_TRUE(jumps(state, {0x72, 0x00}));   // jb
  EXPECT_TRUE(jumps(state, {0x7c, 0x00}));   // jl
  step(state, {0xf6, 0xc1, 0x03});  // test $3,%cl: 5 & 3 = 1
  EXPECT_TRUE(jumps(state, {0x75, 0x00}));   // jne
}

TEST(LbrDataFlow, ArithmeticCarriesValuesAndFlags) {
  x86::KnownState state;
  step(state, {0x31, 0xc0});              // xor %eax,%eax: known zero whatever it held
  ASSERT_TRUE(state.is_known(0));
  EXPECT_EQ(state.value[0], 0u);
  step(state, {0x48, 0xff, 0xc8});        // dec %rax: -1, CF kept (unknown before: flags stay known from xor)
  EXPECT_EQ(state.value[0], ~0ull);
  EXPECT_TRUE(jumps(state, {0x78, 0x00}));  // js
  step(state, {0x48, 0x83, 0xc0, 0x01});  // add $1,%rax: 0 with carry
  EXPECT_EQ(state.value[0], 0u);
  EXPECT_TRUE(jumps(state, {0x72, 0x00}));  // jb (CF)
  EXPECT_TRUE(jumps(state, {0x74, 0x00}));  // je
  step(state, {0x48, 0x8d, 0x58, 0x10});  // lea 0x10(%rax),%rbx
  ASSERT_TRUE(state.is_known(3));
  EXPECT_EQ(state.value[3], 0x10u);
  step(state, {0x48, 0x29, 0xc3});        // sub %rax,%rbx: 0x10 - 0
  EXPECT_EQ(state.value[3], 0x10u);
  EXPECT_FALSE(jumps(state, {0x74, 0x00}));  // je
}

TEST(LbrDataFlow, LoadsAndUnmodelledInstructionsForgetWhatTheyWrite) {
  x86::KnownState state;
  step(state, {0xb8, 0x01, 0x00, 0x00, 0x00});  // mov $1,%eax
  step(state, {0x48, 0x8b, 0x00});              // mov (%rax),%rax: a load
  EXPECT_FALSE(state.is_known(0));
  step(state, {0x48, 0x83, 0xf8, 0x00});        // cmp $0,%rax: unknown input
  EXPECT_FALSE(state.flags_known);
  step(state, {0xbb, 0x02, 0x00, 0x00, 0x00});  // mov $2,%ebx
  step(state, {0x48, 0x0f, 0xaf, 0xdb});        // imul %rbx,%rbx: not modelled
  EXPECT_FALSE(state.is_known(3));
  EXPECT_FALSE(state.flags_known);
}

}  // namespace
}  // namespace whatif::lbr
