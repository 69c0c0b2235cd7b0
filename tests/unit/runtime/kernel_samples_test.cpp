// Unit tests of which kernel-mode samples stand for the program's user IP (sampling/sampler.h):
// only those taken inside a system call, told by the `syscall` instruction before the IP. Test thread.
#include <gtest/gtest.h>

#include <cstdint>

#include "sampling/sampler.h"

namespace whatif::sampling {
namespace {

TEST(KernelSamples, OnlyAnIpJustAfterASyscallInstructionIsInASystemCall) {
  // nop; syscall; nop; int3: the IP after `syscall` (0F 05) is where a system call entered the kernel.
  static const unsigned char code[] = {0x90, 0x0f, 0x05, 0x90, 0xcc};
  auto at = [](int offset) { return reinterpret_cast<uint64_t>(&code[offset]); };
  EXPECT_TRUE(after_system_call(at(3)));
  EXPECT_FALSE(after_system_call(at(2))) << "inside the instruction";
  EXPECT_FALSE(after_system_call(at(4))) << "after another instruction: an interrupt or a fault";
  EXPECT_FALSE(after_system_call(0)) << "no address";
  EXPECT_FALSE(after_system_call(8)) << "unmapped memory is read safely";
}

}  // namespace
}  // namespace whatif::sampling
