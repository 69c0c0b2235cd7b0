// Integration tests: the blocking calls' fast paths. A lock is tried before the blocking protocol,
// and a descriptor's kind (pipe or Unix socket: woken by a thread) is remembered across calls; both
// must keep what a program and the delays see. Runs in the gtest process through the harness
// (harness.h); each program is a child process.
#include <gtest/gtest.h>

#include <string>

#include "harness.h"

namespace itest {
namespace {

TEST_F(Integration, EveryMutexAndRwlockKindKeepsItsAnswersWhenTheRuntimeTriesTheLockFirst) {
  // The lock shims try a lock before they block on it (an uncontended lock settles nothing), so the
  // attempt's answers must be the lock's: EDEADLK, EPERM, recursion, EOWNERDEAD, and a held lock
  // still waits for its release.
  Exit e = whatif(path("p.jsonl"), {"--experiment-length", "20"}, {program("lock_kinds")});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("lock kinds ok"), std::string::npos) << e;
}

TEST_F(Integration, AThreadWokenThroughAPipeIsCreditedNotDelayed) {
  // A consumer that waits in read(2) on a pipe the producer (the sped-up line) writes to is woken
  // by a thread of the program: credited up to the global clock, it pauses for none of the
  // producer's delays. The kind of descriptor is remembered across reads (no fstat each time), so
  // this checks the remembered answer is used, not just the first.
  Profile p = run_half_speedup_of("pipe_wake", "produce", "3000");
  double paused = 0, delay = 0;
  for (const Experiment& x : p.experiments) {
    paused += x.paused_ns;
    delay += x.delay_ns;
  }
  ASSERT_GE(p.experiments.size(), 3u);
  ASSERT_GT(delay, 0) << "the producer's samples inserted no delay";
  EXPECT_LT(paused, 0.2 * delay) << "the consumer paid delays its waker had already executed";
}

}  // namespace
}  // namespace itest
