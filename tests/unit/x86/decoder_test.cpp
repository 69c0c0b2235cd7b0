// Unit tests of the x86-64 decoder (runtime/x86): control-transfer classes and direct targets on
// hand-assembled bytes, the cases the branch tracer and the stall analysis rely on.
#include "x86/decoder.h"

#include <gtest/gtest.h>

#include <vector>

namespace whatif::x86 {
namespace {

constexpr uint64_t kAt = 0x401000;

Instruction decode(std::vector<uint8_t> bytes) { return Decoder().decode(bytes.data(), bytes.size(), kAt); }

TEST(X86Decoder, ConditionalJumpsCarryTheirTargetRelativeToTheNextInstruction) {
  Instruction je = decode({0x74, 0x05});                                 // je +5
  EXPECT_EQ(je.length, 2);
  EXPECT_EQ(je.transfer, Transfer::kConditional);
  EXPECT_EQ(je.target, kAt + 2 + 5);
  Instruction jne = decode({0x0f, 0x85, 0xf0, 0xff, 0xff, 0xff});        // jne -16 (rel32)
  EXPECT_EQ(jne.length, 6);
  EXPECT_EQ(jne.transfer, Transfer::kConditional);
  EXPECT_EQ(jne.target, kAt + 6 - 16);
}

TEST(X86Decoder, LoopAndJrcxzAreConditional) {
  Instruction loop = decode({0xe2, 0xfe});  // loop to itself
  EXPECT_EQ(loop.transfer, Transfer::kConditional);
  EXPECT_EQ(loop.target, kAt);
  Instruction jrcxz = decode({0xe3, 0x10});
  EXPECT_EQ(jrcxz.transfer, Transfer::kConditional);
  EXPECT_EQ(jrcxz.target, kAt + 2 + 0x10);
}

TEST(X86Decoder, DirectJumpsAndCallsResolveStatically) {
  Instruction jmp = decode({0xe9, 0x00, 0x01, 0x00, 0x00});
  EXPECT_EQ(jmp.transfer, Transfer::kJump);
  EXPECT_EQ(jmp.target, kAt + 5 + 0x100);
  Instruction short_jmp = decode({0xeb, 0xfe});
  EXPECT_EQ(short_jmp.transfer, Transfer::kJump);
  EXPECT_EQ(short_jmp.target, kAt);
  Instruction call = decode({0xe8, 0x10, 0x00, 0x00, 0x00});
  EXPECT_EQ(call.transfer, Transfer::kCall);
  EXPECT_EQ(call.target, kAt + 5 + 0x10);
}

TEST(X86Decoder, TransfersThroughRegistersAndMemoryAreIndirect) {
  EXPECT_EQ(decode({0xff, 0xd0}).transfer, Transfer::kIndirectCall);                          // call *%rax
  EXPECT_EQ(decode({0xff, 0x10}).transfer, Transfer::kIndirectCall);                          // call *(%rax)
  EXPECT_EQ(decode({0xff, 0xe0}).transfer, Transfer::kIndirectJump);                          // jmp *%rax
  EXPECT_EQ(decode({0xff, 0x24, 0xc5, 0x00, 0x10, 0x40, 0x00}).transfer, Transfer::kIndirectJump);  // jmp *0x401000(,%rax,8)
  EXPECT_EQ(decode({0xff, 0x25, 0x00, 0x00, 0x00, 0x00}).transfer, Transfer::kIndirectJump);  // jmp *0(%rip) (a PLT slot)
  EXPECT_EQ(decode({0xff, 0xd0}).target, 0u);
}

TEST(X86Decoder, ReturnsOrdinaryAndInvalidInstructions) {
  EXPECT_EQ(decode({0xc3}).transfer, Transfer::kReturn);
  EXPECT_EQ(decode({0xc2, 0x08, 0x00}).transfer, Transfer::kReturn);  // ret $8
  Instruction mov = decode({0x48, 0x89, 0xc3});                     // mov %rax,%rbx
  EXPECT_EQ(mov.length, 3);
  EXPECT_EQ(mov.transfer, Transfer::kNone);
  EXPECT_EQ(decode({0x0f, 0x05}).transfer, Transfer::kOther);  // syscall
  EXPECT_EQ(decode({0x0f, 0x0b}).transfer, Transfer::kOther);  // ud2
  EXPECT_EQ(decode({0x06}).length, 0);                         // push es: invalid in 64-bit mode
  EXPECT_EQ(decode({0x0f}).length, 0);                         // truncated
}

}  // namespace
}  // namespace whatif::x86
