// Unit tests of instruction relocation (runtime/x86/relocate): moved instructions keep their
// absolute targets (rip-relative data, short and long branches, calls) or are refused.
#include "x86/relocate.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "x86/decoder.h"

namespace whatif::x86 {
namespace {

constexpr uint64_t kFrom = 0x401000;
constexpr uint64_t kTo = 0x7f0000;  // about 4 MiB higher

struct Moved {
  RelocateStatus status;
  std::vector<uint8_t> bytes;
  std::size_t consumed = 0;
};

Moved move(std::vector<uint8_t> bytes, uint64_t from = kFrom, uint64_t to = kTo) {
  uint8_t out[kMaxRelocatedLength];
  std::size_t written = 0, consumed = 0;
  RelocateStatus status = relocate(bytes.data(), bytes.size(), from, to, out, sizeof(out), written, consumed);
  return {status, std::vector<uint8_t>(out, out + written), consumed};
}

int32_t read32(const uint8_t* at) {
  int32_t value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

TEST(X86Relocate, PositionIndependentInstructionsAreCopied) {
  Moved moved = move({0x48, 0x01, 0xf8});  // add rax, rdi
  ASSERT_EQ(moved.status, RelocateStatus::kOk);
  EXPECT_EQ(moved.bytes, (std::vector<uint8_t>{0x48, 0x01, 0xf8}));
  EXPECT_EQ(moved.consumed, 3u);
}

TEST(X86Relocate, RipRelativeLoadKeepsItsAbsoluteAddress) {
  // mov rax, [rip + 0x100] at kFrom reads kFrom + 7 + 0x100.
  Moved moved = move({0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00});
  ASSERT_EQ(moved.status, RelocateStatus::kOk);
  ASSERT_EQ(moved.bytes.size(), 7u);
  EXPECT_EQ(moved.bytes[0], 0x48);
  EXPECT_EQ(moved.bytes[2], 0x05);
  EXPECT_EQ(kTo + 7 + static_cast<uint64_t>(static_cast<int64_t>(read32(&moved.bytes[3]))), kFrom + 7 + 0x100);
}

TEST(X86Relocate, RipRelativeWithImmediateKeepsTheImmediate) {
  // cmp dword [rip + 0x20], 5: the displacement sits before the immediate.
  Moved moved = move({0x83, 0x3d, 0x20, 0x00, 0x00, 0x00, 0x05});
  ASSERT_EQ(moved.status, RelocateStatus::kOk);
  EXPECT_EQ(moved.bytes[6], 0x05);
  EXPECT_EQ(kTo + 7 + static_cast<uint64_t>(static_cast<int64_t>(read32(&moved.bytes[2]))), kFrom + 7 + 0x20);
}

TEST(X86Relocate, ShortJumpBecomesRel32ToTheSameTarget) {
  Moved moved = move({0xeb, 0x10});  // jmp +0x10
  ASSERT_EQ(moved.status, RelocateStatus::kOk);
  Instruction jump = Decoder().decode(moved.bytes.data(), moved.bytes.size(), kTo);
  EXPECT_EQ(jump.length, 5);
  EXPECT_EQ(jump.transfer, Transfer::kJump);
  EXPECT_EQ(jump.target, kFrom + 2 + 0x10);
}

TEST(X86Relocate, ShortAndLongConditionalJumpsKeepConditionAndTarget) {
  for (const std::vector<uint8_t>& bytes : {std::vector<uint8_t>{0x7c, 0xf0},                           // jl -16
                                            std::vector<uint8_t>{0x0f, 0x8c, 0xf0, 0xff, 0xff, 0xff}}) {  // jl -16 rel32
    Moved moved = move(bytes);
    ASSERT_EQ(moved.status, RelocateStatus::kOk);
    ASSERT_EQ(moved.bytes.size(), 6u);
    EXPECT_EQ(moved.bytes[0], 0x0f);
    EXPECT_EQ(moved.bytes[1], 0x8c) << "the condition (l) must survive";
    Instruction jcc = Decoder().decode(moved.bytes.data(), moved.bytes.size(), kTo);
    EXPECT_EQ(jcc.transfer, Transfer::kConditional);
    EXPECT_EQ(jcc.target, kFrom + bytes.size() - 16);
  }
}

TEST(X86Relocate, DirectCallPushesTheOriginalReturnAddressThenJumps) {
  uint64_t from = 0x00007f12'34567000ull;  // a high address: both halves of the return address matter
  uint64_t to = from + 0x100000;
  Moved moved = move({0xe8, 0x00, 0x02, 0x00, 0x00}, from, to);  // call +0x200
  ASSERT_EQ(moved.status, RelocateStatus::kOk);
  ASSERT_EQ(moved.bytes.size(), 25u);
  EXPECT_EQ(std::vector<uint8_t>(moved.bytes.begin(), moved.bytes.begin() + 5), (std::vector<uint8_t>{0x48, 0x8d, 0x64, 0x24, 0xf8}));
  uint64_t pushed = static_cast<uint32_t>(read32(&moved.bytes[8])) | (uint64_t{static_cast<uint32_t>(read32(&moved.bytes[16]))} << 32);
  EXPECT_EQ(pushed, from + 5) << "the callee must return to the original code";
  Instruction jump = Decoder().decode(moved.bytes.data() + 20, 5, to + 20);
  EXPECT_EQ(jump.transfer, Transfer::kJump);
  EXPECT_EQ(jump.target, from + 5 + 0x200);
}

TEST(X86Relocate, RefusesWhatCannotMove) {
  EXPECT_EQ(move({0xe2, 0xfe}).status, RelocateStatus::kUnsupported);        // loop
  EXPECT_EQ(move({0xe3, 0x10}).status, RelocateStatus::kUnsupported);        // jrcxz
  EXPECT_EQ(move({0xff, 0xd0}).status, RelocateStatus::kUnsupported);        // call rax
  EXPECT_EQ(move({0xff, 0x15, 0, 0, 0, 0}).status, RelocateStatus::kUnsupported);  // call [rip]
  EXPECT_EQ(move({0x06}).status, RelocateStatus::kUndecodable);  // push es: invalid in 64-bit mode
}

TEST(X86Relocate, RefusesTargetsBeyondRel32) {
  EXPECT_EQ(move({0xeb, 0x10}, kFrom, kFrom + (uint64_t{3} << 30)).status, RelocateStatus::kOutOfRange);
  EXPECT_EQ(move({0x48, 0x8b, 0x05, 0, 0, 0, 0}, kFrom, kFrom + (uint64_t{3} << 30)).status, RelocateStatus::kOutOfRange);
}

}  // namespace
}  // namespace whatif::x86
