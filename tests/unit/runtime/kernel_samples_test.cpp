// Unit tests of which kernel-mode samples stand for the program's user IP (sampling/sampler.h):
// only those taken inside a system call, told by the `syscall` instruction before the IP; and of a
// thread's random first sampling period. Test thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

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

TEST(FirstPeriod, IsWithinOnePeriodAndDiffersBetweenThreads) {
  // A thread's first sample falls at a random point of its first period, so one that lives less
  // than a period is sampled with the probability its CPU time says.
  constexpr uint64_t kPeriod = 1000000;
  std::set<uint64_t> seen;
  double sum = 0;
  for (pid_t tid = 1; tid <= 2000; ++tid) {
    uint64_t first = first_period_ns(kPeriod, tid);
    ASSERT_GE(first, 1u);
    ASSERT_LE(first, kPeriod);
    seen.insert(first);
    sum += static_cast<double>(first);
  }
  EXPECT_GT(seen.size(), 1900u) << "threads started together get unrelated phases";
  EXPECT_NEAR(sum / 2000 / kPeriod, 0.5, 0.05) << "uniform over the period";
  EXPECT_EQ(first_period_ns(1, 7), 1u);
}

}  // namespace
}  // namespace whatif::sampling
