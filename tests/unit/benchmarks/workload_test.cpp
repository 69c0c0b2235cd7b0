// The work macros of the known-answer workloads scale with fractional units, as the harness's
// native ground truth assumes (a line's parameter times 1 - s). Runs on the test's thread.
#include <gtest/gtest.h>

#include <cstdint>

#include "workload.h"

namespace {

// The LCG steps WORK runs, counted by replaying them until the accumulator matches.
long work_steps(double units) {
  std::uint64_t acc = 1;
  WORK(acc, units);
  std::uint64_t replay = 1;
  for (long steps = 0; steps <= static_cast<long>(units * WORK_ITERS) + WORK_ITERS; ++steps) {
    if (replay == acc) return steps;
    replay = replay * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  return -1;
}

TEST(Workload, HalfTheWorkOfAnOddUnitCountIsHalfTheSteps) {
  EXPECT_EQ(work_steps(5), 5 * WORK_ITERS);
  EXPECT_EQ(work_steps(2.5), 2500);  // mix_fine's A at s = 0.5; it ran 2000 steps
  EXPECT_EQ(work_steps(22.5), 22500);  // lock's A at s = 0.25
  EXPECT_EQ(work_steps(0.25), 250);
}

TEST(Workload, FlopsAndWalkScaleWithFractionalUnitsToo) {
  double x = 1.0;
  FLOPS(x, 0.5);
  double y = 1.0;
  for (long i = 0; i < static_cast<long>(0.5 * FLOPS_ITERS); ++i) y = __builtin_sqrt(y * 1.0000001 + 0.5);
  EXPECT_DOUBLE_EQ(x, y);
}

}  // namespace
