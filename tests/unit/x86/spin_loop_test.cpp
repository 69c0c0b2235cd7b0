// Unit tests of spin-wait loop recognition (runtime/x86/spin_loop): loops assembled with GNU as
// (bytes from objdump), padded with nops either side as code around them would be. Test thread.
#include "x86/spin_loop.h"

#include <gtest/gtest.h>

#include <vector>

namespace whatif::x86 {
namespace {

constexpr uint64_t kAt = 0x401000;
constexpr std::size_t kPad = 48;

/// Whether the loop `bytes`, placed kPad bytes into a buffer of int3 either side, is a spin-wait
/// when sampled at each of `offsets` into it.
std::vector<bool> spin_at(const std::vector<uint8_t>& bytes, const std::vector<std::size_t>& offsets) {
  std::vector<uint8_t> code(kPad + bytes.size() + kPad, 0xCC);
  for (std::size_t i = 0; i < bytes.size(); ++i) code[kPad + i] = bytes[i];
  Decoder decoder;
  std::vector<bool> result;
  for (std::size_t offset : offsets) {
    result.push_back(spin_loop_at(decoder, code.data(), code.size(), kAt, kAt + kPad + offset));
  }
  return result;
}

TEST(SpinLoop, AFlagWaitWithoutPauseIsOneAtEveryInstruction) {
  // spin: mov flag(%rip),%eax; test %eax,%eax; je spin   (`while (!flag) ;`)
  std::vector<uint8_t> loop = {0x8b, 0x05, 0, 0, 0, 0, 0x85, 0xc0, 0x74, 0xf6};
  EXPECT_EQ(spin_at(loop, {0, 6, 8}), (std::vector<bool>{true, true, true}));
}

TEST(SpinLoop, ATestAndSetRetryIsOne) {
  // tas: mov $1,%eax; xchg %eax,flag(%rip); test %eax,%eax; jne tas
  std::vector<uint8_t> loop = {0xb8, 1, 0, 0, 0, 0x87, 0x05, 0, 0, 0, 0, 0x85, 0xc0, 0x75, 0xf1};
  EXPECT_EQ(spin_at(loop, {0, 5, 11, 13}), (std::vector<bool>{true, true, true, true}));
}

TEST(SpinLoop, LoopsThatComputeStoreOrWalkAreNot) {
  // lcg: imul %rcx,%rax; add %rdx,%rax; dec %rsi; jne lcg   (the benchmarks' work loop)
  EXPECT_EQ(spin_at({0x48, 0x0f, 0xaf, 0xc1, 0x48, 0x01, 0xd0, 0x48, 0xff, 0xce, 0x75, 0xf4}, {0, 4, 10}),
            (std::vector<bool>{false, false, false}));
  // store: mov flag(%rip),%eax; mov %eax,flag2(%rip); test %eax,%eax; je store
  EXPECT_EQ(spin_at({0x8b, 0x05, 0, 0, 0, 0, 0x89, 0x05, 0, 0, 0, 0, 0x85, 0xc0, 0x74, 0xf0}, {0, 12}),
            (std::vector<bool>{false, false}));
  // search: cmpb $0,(%rdi); lea 1(%rdi),%rdi; jne search   (strlen's shape)
  EXPECT_EQ(spin_at({0x80, 0x3f, 0x00, 0x48, 0x8d, 0x7f, 0x01, 0x75, 0xf7}, {0, 7}),
            (std::vector<bool>{false, false}));
  // walk: mov (%rax),%rax; test %rax,%rax; jne walk   (`while (p) p = p->next;`)
  EXPECT_EQ(spin_at({0x48, 0x8b, 0x00, 0x48, 0x85, 0xc0, 0x75, 0xf8}, {0, 3, 6}),
            (std::vector<bool>{false, false, false}));
  // walk2: mov 8(%rdi),%rdi; cmp $0,%rdi; jne walk2
  EXPECT_EQ(spin_at({0x48, 0x8b, 0x7f, 0x08, 0x48, 0x83, 0xff, 0x00, 0x75, 0xf6}, {0}), (std::vector<bool>{false}));
  // regonly: test %eax,%eax; je regonly   (reads no memory: nothing it waits for can change)
  EXPECT_EQ(spin_at({0x85, 0xc0, 0x74, 0xfc}, {0}), (std::vector<bool>{false}));
}

TEST(SpinLoop, StraightLineCodeAndCodeOutsideTheBufferAreNot) {
  // mov flag(%rip),%eax; test %eax,%eax; ret: no branch back.
  EXPECT_EQ(spin_at({0x8b, 0x05, 0, 0, 0, 0, 0x85, 0xc0, 0xc3}, {0, 6}), (std::vector<bool>{false, false}));
  std::vector<uint8_t> loop = {0x8b, 0x05, 0, 0, 0, 0, 0x85, 0xc0, 0x74, 0xf6};
  Decoder decoder;
  EXPECT_FALSE(spin_loop_at(decoder, loop.data(), loop.size(), kAt, kAt - 1));
  EXPECT_FALSE(spin_loop_at(decoder, loop.data(), loop.size(), kAt, kAt + loop.size()));
  // The loop's start cut off: its first instruction is not in the buffer.
  EXPECT_FALSE(spin_loop_at(decoder, loop.data() + 6, loop.size() - 6, kAt + 6, kAt + 8));
}

}  // namespace
}  // namespace whatif::x86
