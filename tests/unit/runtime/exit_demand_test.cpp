// Unit tests of how threads' CPU demand is read and accounted (runtime/threads/threads.h:
// ExitReadings, ExitDemand, the kept /proc files). Runs in the test thread and threads it starts;
// some tests read schedstat.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "os/fd_guard.h"

#include "os/os.h"
#include "threads/threads.h"

namespace whatif::threads {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(ExitReadings, ExitsFasterThanTheRateReadWithTheProbabilityThatKeepsToIt) {
  // A thread-per-task program retires a thread every ~0.8 ms: reading schedstat at each exit cost
  // each thread ~30 us of dentry and inode allocation under /proc/self/task.
  ExitReadings readings;
  const uint64_t start = 5 * kMs;  // a coarse clock may start low
  std::mt19937 random(7);
  int read = 0;
  for (uint64_t now = start; now < start + ExitReadings::kWindowNs; now += kMs) read += readings.take_turn(now, random());
  EXPECT_EQ(read, 100) << "the first window reads every exit: there is no rate yet";
  // 100 exits in that window: from now on each reads with probability 10/100.
  read = 0;
  const int windows = 20;
  for (uint64_t now = start + ExitReadings::kWindowNs; now < start + (windows + 1) * ExitReadings::kWindowNs; now += kMs) {
    read += readings.take_turn(now, random());
  }
  EXPECT_GT(read, windows * ExitReadings::kReadsPerWindow * 7 / 10);
  EXPECT_LT(read, windows * ExitReadings::kReadsPerWindow * 13 / 10);
}

TEST(ExitReadings, WhichExitOfAGroupReadsIsNotItsPlaceInTheGroup) {
  // A fork-join's workers exit in pairs; the first of a pair waited least. A deadline's first
  // claimant would always be the first of a pair.
  ExitReadings readings;
  std::mt19937 random(11);
  int first = 0, second = 0;
  for (uint64_t now = kMs; now < 40 * ExitReadings::kWindowNs; now += 4 * kMs) {
    first += readings.take_turn(now, random());
    second += readings.take_turn(now + 1000, random());
  }
  EXPECT_GT(first, 0);
  EXPECT_NEAR(static_cast<double>(first) / (first + second), 0.5, 0.12);
}

TEST(ExitReadings, RareExitsAllRead) {
  ExitReadings readings;
  int read = 0;
  for (uint64_t now = kMs; now < 10 * ExitReadings::kWindowNs; now += 20 * kMs) read += readings.take_turn(now, UINT32_MAX);
  EXPECT_EQ(read, 50) << "5 exits a window, fewer than the rate: each reads, whatever it draws";
}

TEST(ExitReadings, AnExitReadsItsCpuClockAndScheduleStatisticsAsTheyWere) {
  ExitReadings readings;
  ThreadState thread;
  thread.tid = os::gettid();
  // Runs 5 ms of CPU time, reading its CPU clock: schedstat's run then holds at least that much
  // (a fresh process that ran less than a scheduler tick may read 0).
  const uint64_t start = os::thread_cpu_ns();
  volatile uint64_t spin = 0;
  while (os::thread_cpu_ns() - start < 5 * kMs) spin = spin + 1;
  readings.record(thread);
  ASSERT_TRUE(thread.exit_known);
  EXPECT_TRUE(thread.exit_read) << "the first window reads every exit";
  EXPECT_GT(thread.exit_cpu_ns, 0u);
  EXPECT_GT(thread.exit_run_ns, 0u);
  EXPECT_LE(thread.exit_run_ns, thread.exit_cpu_ns) << "schedstat's run lags the CPU clock, never leads";
}

/// A retired thread's readings: its CPU clock, and schedstat's run and wait when `read`.
void exited(ThreadState& thread, uint64_t cpu_ns, bool read, uint64_t run_ns = 0, uint64_t wait_ns = 0) {
  thread.exit_known = true;
  thread.exit_cpu_ns = cpu_ns;
  thread.exit_read = read;
  thread.exit_run_ns = run_ns;
  thread.exit_wait_ns = wait_ns;
}

TEST(ExitDemand, AnExitThatReadOnlyItsCpuClockCountsWhatItsReadingWouldHaveSaid) {
  // Tasks of a thread-per-task pool on too few CPUs: schedstat said 1.5 ms of run (the running
  // slice missing) and 1 ms of wait for 2 ms of CPU time. A task of 4 ms counts twice that.
  ExitDemand demand;
  ThreadState read;
  exited(read, 2 * kMs, true, 1500000, 1 * kMs);
  delays::SchedWindow since = demand.account(read);
  EXPECT_EQ(since.run_ns, 1500000u);
  EXPECT_EQ(since.wait_ns, 1 * kMs);
  ThreadState estimated;
  exited(estimated, 4 * kMs, false);
  since = demand.account(estimated);
  EXPECT_EQ(since.run_ns, 3 * kMs);
  EXPECT_EQ(since.wait_ns, 2 * kMs);
}

TEST(ExitDemand, OnlyWhatTheThreadRanSinceTheProfilersLastReadingCounts) {
  ExitDemand demand;
  ThreadState read;
  exited(read, 1 * kMs, true, 1 * kMs, 1 * kMs);  // wait per CPU time 1
  demand.account(read);
  ThreadState thread;
  exited(thread, 30 * kMs, false);
  thread.sched_known = true;  // the profiler read it at 25 ms of run and 7 of wait
  thread.sched_run_ns = 25 * kMs;
  thread.sched_wait_ns = 7 * kMs;
  delays::SchedWindow since = demand.account(thread);
  EXPECT_EQ(since.run_ns, 5 * kMs);
  EXPECT_EQ(since.wait_ns, 5 * kMs);
}

TEST(ExitDemand, RecentExitsWeighMore) {
  // A pool that ran alone, then beside as many threads again: the estimate follows the newer waits.
  ExitDemand demand;
  for (int i = 0; i < 40; ++i) {
    ThreadState quiet;
    exited(quiet, 1 * kMs, true, 1 * kMs, 0);
    demand.account(quiet);
  }
  for (int i = 0; i < 40; ++i) {
    ThreadState busy;
    exited(busy, 1 * kMs, true, 1 * kMs, 1 * kMs);
    demand.account(busy);
  }
  ThreadState estimated;
  exited(estimated, 1 * kMs, false);
  delays::SchedWindow since = demand.account(estimated);
  EXPECT_GT(since.wait_ns, 950000u);
  EXPECT_LE(since.wait_ns, 1 * kMs);
}

TEST(ExitDemand, AnExitWithNoReadingCountsNothing) {
  ExitDemand demand;
  ThreadState none;
  delays::SchedWindow since = demand.account(none);
  EXPECT_EQ(since.run_ns, 0u);
  EXPECT_EQ(since.wait_ns, 0u);
  ThreadState unread;  // no exit read schedstat yet: nothing to estimate from
  exited(unread, 1 * kMs, false);
  since = demand.account(unread);
  EXPECT_EQ(since.run_ns, 0u);
}

TEST(TaskFiles, ASchedstatReadingKeepsItsFileOpenUntilTheThreadRetires) {
  // The profiler reads every thread's schedstat every window: opening and closing the /proc file
  // each time cost several times the read.
  ThreadState self;
  self.tid = static_cast<pid_t>(gettid());
  uint64_t run = 0, wait = 0, switches = 0;
  ASSERT_TRUE(read_task_schedstat(self, run, wait));
  ASSERT_GE(self.schedstat_fd, 0);
  EXPECT_TRUE(os::is_protected_fd(self.schedstat_fd)) << "the program's close must not take it";
  const int fd = self.schedstat_fd;
  volatile uint64_t spin = 0;
  const uint64_t before = run;
  for (int i = 0; i < 20000000; ++i) spin = spin + 1;
  ASSERT_TRUE(read_task_schedstat(self, run, wait));
  EXPECT_EQ(self.schedstat_fd, fd) << "the same descriptor, read again from its start";
  EXPECT_GT(run, before);
  ASSERT_TRUE(read_task_switches(self, switches));
  EXPECT_GE(self.status_fd, 0);
  close_task_files(self);
  EXPECT_EQ(self.schedstat_fd, -1);
  EXPECT_EQ(self.status_fd, -1);
  EXPECT_FALSE(os::is_protected_fd(fd));
}

TEST(TaskFiles, AThreadThatIsGoneReadsFalseAndClosesItsFile) {
  // Opened while the thread lived, read after it exited: no reading, and nothing stays open.
  ThreadState other;
  uint64_t run = 0, wait = 0;
  bool read = false;
  std::thread thread([&] {
    other.tid = static_cast<pid_t>(gettid());
    read = read_task_schedstat(other, run, wait);
  });
  thread.join();
  ASSERT_TRUE(read);
  ASSERT_GE(other.schedstat_fd, 0);
  EXPECT_FALSE(read_task_schedstat(other, run, wait));
  EXPECT_EQ(other.schedstat_fd, -1);
}

}  // namespace
}  // namespace whatif::threads
