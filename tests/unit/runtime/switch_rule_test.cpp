// Unit tests of the adaptive sampler's switching rule (runtime/sampling/switch_rule.h): when a thread
// moves from perf_event to the CPU-time timer and back, with its hysteresis. Pure; the test thread.
#include "sampling/switch_rule.h"

#include <gtest/gtest.h>

namespace whatif::sampling {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(SwitchRule, AComputingThreadStaysOnPerf) {
  SwitchState state;
  // 20 ms windows of CPU time with a preemption-free loop: 1 voluntary switch each.
  for (int window = 0; window < 50; ++window) EXPECT_FALSE(next_on_timer(state, 20 * kMs, 1)) << window;
}

TEST(SwitchRule, AServerThreadMovesToTheTimerOnceItsWindowHoldsEnoughEvidence) {
  SwitchState state;
  // A request thread: 20 us of CPU per request, blocking after each (50,000 switches per CPU-second).
  // 50 switches in 1 ms of CPU: too little evidence yet (under 100 switches and 10 ms).
  EXPECT_FALSE(next_on_timer(state, 1 * kMs, 50));
  // The next window completes it: 100 switches in 2 ms.
  EXPECT_TRUE(next_on_timer(state, 1 * kMs, 50));
  EXPECT_TRUE(state.on_timer);
}

TEST(SwitchRule, TheThresholdIsSwitchesPerCpuSecond) {
  // 10 ms of CPU: 100 switches is exactly 10,000 per CPU-second (moves), 99 is under (stays).
  SwitchState at;
  EXPECT_TRUE(next_on_timer(at, 10 * kMs, 100));
  SwitchState under;
  EXPECT_FALSE(next_on_timer(under, 20 * kMs, 199));
}

TEST(SwitchThresholds, WhereSwitchesAreCheapTheyStayAtTheMost) {
  // 1 us a switch, 2 events: 10,000 switches cost 2% of a CPU-second, under the 3% budget.
  const SwitchThresholds cheap = SwitchThresholds::for_cost(1000, 2);
  EXPECT_EQ(cheap.to_timer, SwitchRule::kMostToTimer);
  EXPECT_EQ(cheap.to_perf, SwitchRule::kMostToTimer / 4);
  // Not measured (no perf_event): the defaults.
  EXPECT_EQ(SwitchThresholds::for_cost(0, 2).to_timer, SwitchRule::kMostToTimer);
  EXPECT_EQ(SwitchThresholds{}.to_timer, SwitchRule::kMostToTimer);
}

TEST(SwitchThresholds, DearerSwitchesMoveThreadsSoonerButNeverBelowTheFewest) {
  // 2.5 us, 2 events: 3% of a CPU-second buys 6,000 switches.
  const SwitchThresholds vm = SwitchThresholds::for_cost(2500, 2);
  EXPECT_EQ(vm.to_timer, 6000u);
  EXPECT_EQ(vm.to_perf, 1500u);
  // One event a thread (no kernel-mode sampler) affords twice as many: past the most, 10,000.
  EXPECT_EQ(SwitchThresholds::for_cost(2500, 1).to_timer, SwitchRule::kMostToTimer);
  // 20 us, 2 events (this nested VM): 750 would move a thread pool's main thread, whose timer
  // samples lose precision.
  EXPECT_EQ(SwitchThresholds::for_cost(20000, 2).to_timer, SwitchRule::kFewestToTimer);
}

TEST(SwitchThresholds, TheRuleJudgesByTheThresholdsItIsGiven) {
  // 7,000 switches a CPU-second (a memcached worker): on perf where switches are cheap, on the
  // timer where dear.
  const SwitchThresholds dear = SwitchThresholds::for_cost(20000, 2);
  SwitchState cheap_state;
  SwitchState dear_state;
  EXPECT_FALSE(next_on_timer(cheap_state, 10 * kMs, 70));
  EXPECT_TRUE(next_on_timer(dear_state, 10 * kMs, 70, dear));
  // Back to perf below a quarter of the threshold (900 < 1000), after the calm windows.
  for (uint32_t i = 0; i + 1 < SwitchRule::kCalmWindows; ++i) EXPECT_TRUE(next_on_timer(dear_state, 100 * kMs, 90, dear));
  EXPECT_FALSE(next_on_timer(dear_state, 100 * kMs, 90, dear));
  // A thread pool's main thread (2,500 a CPU-second) stays on perf even where switches are dear.
  SwitchState pool_main;
  for (int window = 0; window < 20; ++window) EXPECT_FALSE(next_on_timer(pool_main, 10 * kMs, 25, dear)) << window;
}

TEST(SwitchThresholds, TheProcessThresholdsAreWhatWasSet) {
  const SwitchThresholds before = switch_thresholds();
  set_switch_thresholds(SwitchThresholds::for_cost(2500, 2));
  EXPECT_EQ(switch_thresholds().to_timer, 6000u);
  EXPECT_EQ(switch_thresholds().to_perf, 1500u);
  set_switch_thresholds(before);
}

TEST(SwitchRule, AThreadThatJoinsTwoThreadsEveryMillisecondStaysOnPerf) {
  // A main thread that starts two threads, runs 0.9 ms and joins them: 2,200 blocks a CPU-second.
  // On the timer its line's samples came at 4-ms ticks and its prediction halved.
  SwitchState state;
  for (int window = 0; window < 50; ++window) EXPECT_FALSE(next_on_timer(state, 9 * kMs, 20)) << window;
}

TEST(SwitchRule, AThreadBetweenTheThresholdsDoesNotFlap) {
  SwitchState state;
  ASSERT_TRUE(next_on_timer(state, 10 * kMs, 500));  // 50,000 per CPU-second: to the timer
  // 5000 per CPU-second: under the 10,000 that moved it, over the 2500 that moves it back. It stays.
  for (int window = 0; window < 20; ++window) EXPECT_TRUE(next_on_timer(state, 10 * kMs, 50)) << window;
  // A thread on perf at the same rate stays on perf.
  SwitchState on_perf;
  for (int window = 0; window < 20; ++window) EXPECT_FALSE(next_on_timer(on_perf, 10 * kMs, 50)) << window;
}

TEST(SwitchRule, BackToPerfOnlyAfterSeveralCalmWindowsInARow) {
  SwitchState state;
  ASSERT_TRUE(next_on_timer(state, 10 * kMs, 100));
  // Calm windows (100 per CPU-second) must come kCalmWindows in a row; a busy one resets the count.
  for (uint32_t i = 0; i + 1 < SwitchRule::kCalmWindows; ++i) EXPECT_TRUE(next_on_timer(state, 10 * kMs, 1));
  EXPECT_TRUE(next_on_timer(state, 10 * kMs, 100)) << "a busy window in between";
  for (uint32_t i = 0; i + 1 < SwitchRule::kCalmWindows; ++i) EXPECT_TRUE(next_on_timer(state, 10 * kMs, 1));
  EXPECT_FALSE(next_on_timer(state, 10 * kMs, 1)) << "the last calm window in a row moves it back";
  EXPECT_EQ(state.calm, 0u);
}

TEST(SwitchRule, AnIdleThreadKeepsItsSampler) {
  // A thread that neither runs nor switches gives no evidence: it stays where it is, on either side.
  SwitchState on_perf;
  SwitchState on_timer;
  ASSERT_TRUE(next_on_timer(on_timer, 10 * kMs, 100));
  for (int window = 0; window < 100; ++window) {
    EXPECT_FALSE(next_on_timer(on_perf, 0, 0));
    EXPECT_TRUE(next_on_timer(on_timer, 0, 0));
  }
}

TEST(SwitchRule, SwitchesWithoutCpuTimeAreJudgedWithoutDividingByZero) {
  // A thread that blocked 100 times in a window the kernel charged no CPU time to (coarse accounting).
  SwitchState state;
  EXPECT_TRUE(next_on_timer(state, 0, 100));
}

TEST(SwitchRule, HugeCountsDoNotOverflow) {
  SwitchState busy;
  EXPECT_TRUE(next_on_timer(busy, 1000 * kMs, UINT64_MAX / 2));
  SwitchState calm;
  EXPECT_FALSE(next_on_timer(calm, UINT64_MAX / 4, 1000));
}

}  // namespace
}  // namespace whatif::sampling
