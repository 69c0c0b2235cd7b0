// Unit tests of synchronous self-crediting: the published selected ranges (delays), the scan cursor
// that splits a sample ring between its thread and the profiler (sampling, os), and settle_delays,
// which credits a thread's own samples before it wakes another thread (core).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <atomic>
#include <csignal>

#include <fmt/format.h>

#include "threads/settle.h"
#include "threads/threads.h"
#include "delays/delays.h"
#include "os/os.h"
#include "os/perf_event.h"
#include "sampling/sample_ring.h"

namespace whatif {
namespace {

constexpr uint64_t kMs = 1000000;

void start_experiment(delays::GlobalDelays& global, uint64_t delay_ns, uint64_t begin, uint64_t end) {
  delays::publish_selected_ranges(global, &begin, &end, 1);
  global.epoch_start_ns.store(global.global_ns.load());
  global.delay_size_ns.store(delay_ns);
  global.phase.store(static_cast<int>(delays::Phase::kRunning));
}

os::RawSample sample_at(uint64_t ip) {
  os::RawSample sample;
  sample.ip = ip;
  sample.callchain[0] = ip;
  sample.callchain_length = 1;
  return sample;
}

TEST(SelectedRanges, ThreadsSeeThemOnlyWhileAnExperimentWithADelayRuns) {
  delays::GlobalDelays global;
  uint64_t begins[] = {0x1000, 0x3000}, ends[] = {0x1010, 0x3008};
  delays::publish_selected_ranges(global, begins, ends, 2);
  delays::RangesSnapshot snapshot;
  EXPECT_FALSE(delays::snapshot_selected_ranges(global, snapshot)) << "idle: nothing to credit";
  global.phase.store(static_cast<int>(delays::Phase::kRunning));
  EXPECT_FALSE(delays::snapshot_selected_ranges(global, snapshot)) << "a baseline (speedup 0) credits nothing";
  global.delay_size_ns.store(kMs / 2);
  ASSERT_TRUE(delays::snapshot_selected_ranges(global, snapshot));
  EXPECT_TRUE(snapshot.contains(0x1000));
  EXPECT_TRUE(snapshot.contains(0x3007));
  EXPECT_FALSE(snapshot.contains(0x1010)) << "ranges are half-open";
  EXPECT_FALSE(snapshot.contains(0x2000));
  global.phase.store(static_cast<int>(delays::Phase::kDraining));
  EXPECT_FALSE(delays::snapshot_selected_ranges(global, snapshot));
}

TEST(SelectedRanges, MoreRangesThanTheTableHoldsAreCut) {
  delays::GlobalDelays global;
  constexpr uint32_t kMany = delays::SelectedRanges::kMax + 10;
  uint64_t begins[kMany], ends[kMany];
  for (uint32_t i = 0; i < kMany; ++i) {
    begins[i] = 0x1000 * (i + 1);
    ends[i] = begins[i] + 4;
  }
  delays::publish_selected_ranges(global, begins, ends, kMany);
  global.delay_size_ns.store(1);
  global.phase.store(static_cast<int>(delays::Phase::kRunning));
  delays::RangesSnapshot snapshot;
  ASSERT_TRUE(delays::snapshot_selected_ranges(global, snapshot));
  EXPECT_EQ(snapshot.count, delays::SelectedRanges::kMax);
}

/// Scans from the sampled thread's side, counting what it sees.
struct Seen {
  std::set<uint64_t> ips;
  static void visit(void* context, const os::RawSample& sample) { static_cast<Seen*>(context)->ips.insert(sample.ip); }
};

TEST(SampleRingScan, EverySampleIsScannedByExactlyOneSide) {
  sampling::SampleRing ring;
  for (uint64_t ip = 1; ip <= 3; ++ip) ring.push(sample_at(ip));
  Seen owner;
  ring.scan_own(&Seen::visit, &owner);
  EXPECT_EQ(owner.ips, (std::set<uint64_t>{1, 2, 3}));
  ring.scan_own(&Seen::visit, &owner);  // nothing new
  EXPECT_EQ(owner.ips.size(), 3u);
  ring.push(sample_at(4));
  std::set<uint64_t> scanned_by_owner, not_scanned;
  ring.drain([&](const os::RawSample& s) { (s.owner_scanned ? scanned_by_owner : not_scanned).insert(s.ip); });
  EXPECT_EQ(scanned_by_owner, (std::set<uint64_t>{1, 2, 3}));
  EXPECT_EQ(not_scanned, (std::set<uint64_t>{4}));
  Seen later;
  ring.scan_own(&Seen::visit, &later);
  EXPECT_TRUE(later.ips.empty()) << "the profiler drained sample 4: the thread must not act on it too";
}

TEST(SampleRingScan, ABacklogOverHalfTheRingIsLeftToTheProfiler) {
  sampling::SampleRing ring;
  for (uint64_t ip = 1; ip <= sampling::SampleRing::kCapacity / 2 + 1; ++ip) ring.push(sample_at(ip));
  Seen owner;
  ring.scan_own(&Seen::visit, &owner);
  EXPECT_TRUE(owner.ips.empty());
  std::size_t drained = 0;
  ring.drain([&](const os::RawSample& s) { drained += s.owner_scanned ? 0 : 1; });
  EXPECT_EQ(drained, sampling::SampleRing::kCapacity / 2 + 1);
}

void burn_cpu_ms(uint64_t ms) {
  struct timespec start {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile uint64_t x = 0;
  for (;;) {
    for (int i = 0; i < 100000; ++i) x = x + 1;
    struct timespec now {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    uint64_t spent = static_cast<uint64_t>((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec));
    if (spent >= ms * kMs) return;
  }
}

uint64_t thread_cpu_ns() {
  struct timespec now {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

/// The calling thread's user-mode CPU time.
uint64_t user_ns() {
  struct rusage usage {};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<uint64_t>(usage.ru_utime.tv_sec) * 1000000000ull + static_cast<uint64_t>(usage.ru_utime.tv_usec) * 1000ull;
}

/// One measurement of PerfRandomPeriods.KeepTheSampleRateOfTheCpuTime: samples taken, and the
/// periods of user-mode and of all CPU time the thread ran meanwhile.
struct SampleRate {
  uint64_t samples = 0;
  double user_periods = 0, cpu_periods = 0;
  bool within() const {
    return static_cast<double>(samples) > 0.97 * user_periods && static_cast<double>(samples) < 1.02 * cpu_periods;
  }
};

TEST(PerfRandomPeriods, KeepTheSampleRateOfTheCpuTime) {
  // Bug: each random period was set from the handler, and PERF_EVENT_IOC_PERIOD restarts the count
  // there, so the time from the overflow to the handler fell outside every period (about 25 us in
  // this VM: 2.5% fewer samples than the CPU time, and every selected line's delay as much short).
  // Here the "handler" runs up to a chunk of work (about 200 us of CPU) after each sample: about
  // 10% fewer without the fix.
  auto measure = [](SampleRate& rate) {
    os::PerfSampler sampler;
    int opened = sampler.open(os::gettid(), kMs, /*signal=*/0, 1, /*with_stack=*/false);
    if (opened != 0) GTEST_SKIP() << "perf_event_open unavailable here (" << -opened << ")";
    sampler.set_jitter(true, 12345);
    ASSERT_EQ(sampler.enable(), 0);
    constexpr uint64_t kCpuNs = 600 * kMs;
    const uint64_t start = thread_cpu_ns();
    const uint64_t user_start = user_ns();
    volatile uint64_t x = 0;
    while (thread_cpu_ns() - start < kCpuNs) {
      // User-mode work only between the checks: this sampler drops samples taken in the kernel.
      for (int i = 0; i < 300000; ++i) x = x + 1;
      // Drained, not only scanned: nothing else frees the ring here.
      if (std::size_t taken = sampler.drain([](const os::RawSample&) {}); taken > 0) {
        rate.samples += taken;
        sampler.next_period();
      }
    }
    sampler.disable();
    rate.user_periods = static_cast<double>(user_ns() - user_start) / kMs;
    rate.cpu_periods = static_cast<double>(thread_cpu_ns() - start) / kMs;
  };
  // Of the thread's CPU time, its user-mode part: on a loaded machine (make test's -j) more of it
  // goes to the kernel's interrupts and switches, which this sampler does not count (570 samples of
  // 600 once beside other tests, 576 of 597 in a CI run; 561 without the fix on a quiet machine).
  // The kernel splits user and system time by ticks, not exactly: more samples than user periods
  // were once counted on a loaded machine (609 for 586), so the upper bound is the whole CPU time,
  // which the clock measures exactly (the seed's first 600 draws average 0.99999 ms). Each period's
  // lateness once included the ioctl that restarts it, and a CI run counted 615 for 600 (2.5% over);
  // 600-605 here since the count is read after the ioctl, 601-607 before. The bounds hold on a
  // quiet CPU: up to three measurements, so that a neighbouring test's load does not decide it; the
  // bug is 10% in every one.
  std::string seen;
  for (int attempt = 0; attempt < 3; ++attempt) {
    SampleRate rate;
    measure(rate);
    if (HasFatalFailure() || IsSkipped()) return;
    seen += fmt::format(" {} samples in {:.1f} periods of user CPU and {:.1f} of CPU;", rate.samples, rate.user_periods,
                        rate.cpu_periods);
    if (rate.within()) return;
  }
  ADD_FAILURE() << "outside [0.97 x user, 1.02 x CPU] periods in three measurements:" << seen;
}

// Tasks running on the machine now, this one included (/proc/stat procs_running), or -1.
long running_tasks() {
  FILE* stat = std::fopen("/proc/stat", "r");
  if (stat == nullptr) return -1;
  char line[256];
  long running = -1;
  while (std::fgets(line, sizeof(line), stat) != nullptr) {
    if (std::sscanf(line, "procs_running %ld", &running) == 1) break;
  }
  std::fclose(stat);
  return running;
}

TEST(PerfFirstPeriod, AFirstPeriodAtTheTimersFloorNeitherFloodsNorStopsTheSampler) {
  // Bug: a random first period of 10 us or less (1 thread in 100 at a 1-ms period) went wrong in
  // this VM's kernel: the event fired far faster than its period (2 ms of CPU filled the ring and
  // lost 600-8000 records), and the whole period set afterwards did not take (no sample at all in
  // the next 40 ms, or one every 70 us); with a signal it kept firing every 10-30 us whatever period
  // the handler set (one thread of a pool: 8700 signals).
  struct Attempt {
    std::size_t samples = 0, lost = 0;
    double expected = 0;  // ms of CPU while sampled at the whole period
    long busy = 0;        // the most other tasks seen running beside it
  };
  auto attempt = [](Attempt& a) -> int {
    os::PerfSampler sampler;
    int opened = sampler.open(os::gettid(), kMs, /*signal=*/0, 1, /*with_stack=*/false, /*kernel_only=*/false,
                              /*first_period_ns=*/5000);
    if (opened != 0) return opened;
    a.busy = running_tasks() - 1;
    if (sampler.enable() != 0) return -1;
    volatile uint64_t x = 0;
    auto spin_cpu = [&](uint64_t ns) {
      for (uint64_t start = thread_cpu_ns(); thread_cpu_ns() - start < ns;) {
        for (int i = 0; i < 3000; ++i) x = x + 1;
      }
    };
    // As the handler does: the whole period is set right after the first sample (within 2 ms of CPU).
    std::size_t early = 0;
    for (uint64_t start = thread_cpu_ns(); early == 0 && thread_cpu_ns() - start < 2 * kMs;) {
      for (int i = 0; i < 300; ++i) x = x + 1;
      early += sampler.drain([](const os::RawSample&) {});
    }
    a.lost = sampler.lost();
    sampler.next_period();  // what the handler does after the first sample
    // The thread's whole CPU time: its user part is split off by ticks, too coarse for 40 ms.
    const uint64_t cpu_start = thread_cpu_ns();
    for (int i = 0; i < 40; ++i) {
      spin_cpu(kMs);
      a.samples += sampler.drain([](const os::RawSample&) {});
      a.busy = std::max(a.busy, running_tasks() - 1);
    }
    sampler.disable();
    a.expected = static_cast<double>(thread_cpu_ns() - cpu_start) / kMs;
    return 0;
  };
  // Only a run on an otherwise idle machine tells: beside a busy task this VM's task clock strays
  // from the period by itself, as far as the bug did, preempted or not (129-630 samples in 40 ms in
  // 7 runs of 40 beside three CPU hogs; 138-371 in 4 of 40 beside one, with at most 3 preemptions;
  // 24-45 alone). So the first run during which no other task was seen running is judged; a machine
  // busy through all of them skips, and says so.
  Attempt a;
  for (int tries = 0; tries < 20; ++tries) {
    a = Attempt{};
    int result = attempt(a);
    if (result > 0) GTEST_SKIP() << "perf_event_open unavailable here (" << result << ")";
    ASSERT_EQ(result, 0);
    if (getenv("WHATIF_TEST_TRACE")) fprintf(stderr, "attempt %d: %zu samples in %.1f ms, %ld busy\n", tries, a.samples, a.expected, a.busy);
    if (a.busy <= 0) break;
  }
  if (a.busy > 0) GTEST_SKIP() << "other tasks ran beside each of 20 runs: the machine is too busy to judge the sampler's rate";
  EXPECT_EQ(a.lost, 0u) << "the ring overflowed: the event fired faster than its period";
  // The bug gave 0, or 549-617 (a period that never took); alone, 27-34 in 14 runs of 16 and 71-84 in
  // the other two.
  EXPECT_GT(static_cast<double>(a.samples), 0.3 * a.expected) << a.samples << " samples in " << a.expected << " ms of CPU";
  EXPECT_LT(static_cast<double>(a.samples), 8 * a.expected) << a.samples << " samples in " << a.expected << " ms of CPU";
}

TEST(PerfRingScan, SamplesTheThreadScannedAreReportedAsSuchAndNeverTwice) {
  os::PerfSampler sampler;
  // Without stack copies: 20 samples of ~8.5 KiB would exceed half the ring, which scan_own leaves
  // to the drainer (the runtime scans at every sample, so its span is one record).
  int opened = sampler.open(os::gettid(), kMs, /*signal=*/0, 1, /*with_stack=*/false);
  if (opened != 0) GTEST_SKIP() << "perf_event_open unavailable here (" << -opened << "): the timer ring covers this path";
  ASSERT_EQ(sampler.enable(), 0);
  burn_cpu_ms(20);
  struct Count {
    uint64_t samples = 0;
    static void visit(void* context, const os::RawSample&) { ++static_cast<Count*>(context)->samples; }
  } owner;
  sampler.scan_own(&Count::visit, &owner);
  EXPECT_GE(owner.samples, 5u) << "20 ms of CPU at a 1 ms period";
  burn_cpu_ms(10);
  sampler.disable();
  uint64_t owner_scanned = 0, not_scanned = 0;
  sampler.drain([&](const os::RawSample& s) { ++(s.owner_scanned ? owner_scanned : not_scanned); });
  EXPECT_EQ(owner_scanned, owner.samples);
  EXPECT_GE(not_scanned, 3u);
  Count again;
  sampler.scan_own(&Count::visit, &again);
  EXPECT_EQ(again.samples, 0u);
}

/// A sampler whose ring the test fills: settle_delays only needs scan_own.
class FakeSampler final : public sampling::ThreadSampler {
 public:
  int start(pid_t, uint64_t, int) override { return 0; }
  void stop() override {}
  std::size_t drain(sampling::SampleVisitor visit, void* context) override {
    return ring.drain([&](const os::RawSample& s) { visit(context, s); });
  }
  uint64_t lost() const override { return ring.lost(); }
  void scan_own(os::OwnSampleVisitor visit, void* context) override { ring.scan_own(visit, context); }
  bool on_signal(const siginfo_t*, void*) override { return false; }
  sampling::SampleRing ring;
};

/// What the profiler does with drained samples that attribution put in the selected line (the
/// test knows them by IP): counts those threads::profiler_credits says it must credit.
struct ProfilerSide {
  delays::RangesSnapshot published;
  std::set<uint64_t> selected_line_ips;
  std::set<uint64_t> credited;
  static void visit(void* context, const os::RawSample& sample) {
    auto* side = static_cast<ProfilerSide*>(context);
    if (side->selected_line_ips.contains(sample.ip) && threads::profiler_credits(sample, side->published)) {
      side->credited.insert(sample.ip);
    }
  }
};

TEST(SettleDelays, AHolderCreditsItsOwnSampleBeforeItWakesTheWaiter) {
  // The lock hand-off of the `lock` benchmark: the holder took a sample in the selected line and
  // unlocks (table 1). Its delay must be in the global clock before the waiter wakes, so the waiter
  // is credited for it instead of pausing later, inside its own critical section.
  delays::GlobalDelays global;
  threads::ThreadState holder, waiter;
  auto fake = std::make_unique<FakeSampler>();
  FakeSampler& ring = *fake;
  holder.sampler = std::move(fake);
  start_experiment(global, 4 * kMs, 0x1000, 0x1100);
  threads::before_blocking(global, waiter);  // the waiter blocks in pthread_mutex_lock
  ring.ring.push(sample_at(0x1040));                // in the selected line
  ring.ring.push(sample_at(0x5000));                // elsewhere
  threads::settle_delays(global, holder);              // pthread_mutex_unlock: before waking
  EXPECT_EQ(global.global_ns.load(), 4 * kMs) << "one selected sample, credited without the profiler";
  EXPECT_EQ(holder.delays.paused_ns.load(), 0u) << "its own sample counts as its pause";
  delays::after_blocking(global, waiter.delays, /*woken_by_thread=*/true);
  EXPECT_EQ(waiter.delays.paused_ns.load(), 0u);
  EXPECT_EQ(waiter.delays.local_ns.load(), global.global_ns.load());
  ProfilerSide profiler;
  ASSERT_TRUE(delays::snapshot_selected_ranges(global, profiler.published));
  profiler.selected_line_ips = {0x1040};
  ring.drain(&ProfilerSide::visit, &profiler);
  EXPECT_TRUE(profiler.credited.empty()) << "the profiler must not credit the same sample again";
}

TEST(SettleDelays, EverySelectedSampleIsCreditedByExactlyOneSide) {
  delays::GlobalDelays global;
  threads::ThreadState thread;
  auto fake = std::make_unique<FakeSampler>();
  FakeSampler& ring = *fake;
  thread.sampler = std::move(fake);
  start_experiment(global, 2 * kMs, 0x1000, 0x1100);
  os::RawSample through_caller = sample_at(0x6000);  // in the line only by its caller's frame
  through_caller.callchain[1] = 0x1041;
  through_caller.callchain_length = 2;
  ring.ring.push(sample_at(0x1040));
  ring.ring.push(through_caller);
  threads::settle_delays(global, thread);  // scans both, credits the one whose IP is in the line
  ring.ring.push(sample_at(0x1080));       // taken after the scan: the owner never saw it
  EXPECT_EQ(global.global_ns.load(), 2 * kMs);

  ProfilerSide profiler;
  ASSERT_TRUE(delays::snapshot_selected_ranges(global, profiler.published));
  profiler.selected_line_ips = {0x1040, 0x6000, 0x1080};  // what attribution finds in the line
  ring.drain(&ProfilerSide::visit, &profiler);
  EXPECT_EQ(profiler.credited, (std::set<uint64_t>{0x6000, 0x1080}))
      << "the owner credited 0x1040; the profiler credits the callchain sample and the unscanned one";
}

TEST(ProfilerCredits, IsTheComplementOfTheOwnersCredit) {
  delays::RangesSnapshot published;
  published.count = 1;
  published.begin[0] = 0x1000;
  published.end[0] = 0x1100;
  os::RawSample sample = sample_at(0x1040);
  sample.owner_scanned = true;
  EXPECT_FALSE(threads::profiler_credits(sample, published)) << "the owner credited it";
  sample.owner_scanned = false;
  EXPECT_TRUE(threads::profiler_credits(sample, published)) << "the owner never saw it";
  sample = sample_at(0x6000);
  sample.owner_scanned = true;
  EXPECT_TRUE(threads::profiler_credits(sample, published)) << "selected by a caller's frame: the owner skipped it";
  published.count = 0;
  sample = sample_at(0x1040);
  sample.owner_scanned = true;
  EXPECT_TRUE(threads::profiler_credits(sample, published)) << "a range past the published table";
}

TEST(SettleDelays, BeforeBlockingCreditsOwnSamplesPaysWhatItOwesAndMarksTheThreadBlocked) {
  // What facade::before_blocking (every interposed blocking call) runs: a thread about to block
  // credits its own samples in the selected line (so those it wakes later see them), pays the delay
  // it owes, and only then counts as blocked, when the profiler stops waiting for it.
  delays::GlobalDelays global;
  threads::ThreadState blocker, debtor;
  auto fake = std::make_unique<FakeSampler>();
  fake->ring.push(sample_at(0x1040));  // its own sample in the selected line
  blocker.sampler = std::move(fake);
  start_experiment(global, 2 * kMs, 0x1000, 0x1100);
  threads::before_blocking(global, blocker);
  EXPECT_EQ(global.global_ns.load(), 2 * kMs) << "its own sample raised the global clock before it blocked";
  EXPECT_EQ(blocker.delays.paused_ns.load(), 0u) << "its own sample counts as its pause";
  EXPECT_TRUE(blocker.delays.blocked.load());
  threads::before_blocking(global, debtor);  // owes the 2 ms the blocker's sample added
  EXPECT_EQ(debtor.delays.local_ns.load(), 2 * kMs);
  EXPECT_GE(debtor.delays.paused_ns.load(), 2 * kMs) << "it paid what it owed first";
  EXPECT_LE(debtor.delays.paused_ns.load(), 2 * kMs + debtor.delays.excess_ns)
      << "slept no more than it owed, and what it overslept pays toward the next debt";
  EXPECT_TRUE(debtor.delays.blocked.load());
  global.raise_to(6 * kMs);  // more samples elsewhere while both are blocked
  EXPECT_FALSE(delays::owes_while_running(blocker.delays, 6 * kMs)) << "a blocked thread is not waited for";
  EXPECT_FALSE(delays::owes_while_running(debtor.delays, 6 * kMs));
  delays::after_blocking(global, debtor.delays, /*woken_by_thread=*/true);
  EXPECT_FALSE(debtor.delays.blocked.load());
}

TEST(SettleDelays, NothingIsCreditedDuringABaseline) {
  delays::GlobalDelays global;
  threads::ThreadState thread;
  auto fake = std::make_unique<FakeSampler>();
  fake->ring.push(sample_at(0x1040));
  thread.sampler = std::move(fake);
  start_experiment(global, 0, 0x1000, 0x1100);
  threads::settle_delays(global, thread);
  EXPECT_EQ(global.global_ns.load(), 0u);
  bool scanned = true;
  thread.sampler->drain([](void* context, const os::RawSample& s) { *static_cast<bool*>(context) = s.owner_scanned; },
                        &scanned);
  EXPECT_FALSE(scanned) << "samples the thread did not act on stay the profiler's";
}

TEST(SpinWait, APauseWithinAFewInstructionsOfTheIpIsASpinWait) {
  // A page of code: a spin lock's loop (pause; mov; xchg; test; jne) in the middle, and elsewhere
  // an endbr64 (F3 0F 1E FA) and a rep movsb (F3 A4), whose F3 is not a pause.
  alignas(4096) static uint8_t page[4096];
  std::memset(page, 0x90, sizeof(page));  // nops
  const uint8_t loop[] = {0xF3, 0x90, 0x89, 0xD0, 0x86, 0x05, 0, 0, 0, 0, 0x84, 0xC0, 0x75, 0xF2};
  std::memcpy(page + 2000, loop, sizeof(loop));
  const uint8_t other[] = {0xF3, 0x0F, 0x1E, 0xFA, 0xF3, 0xA4};
  std::memcpy(page + 100, other, sizeof(other));
  const auto at = [](std::size_t offset) { return reinterpret_cast<uint64_t>(page + offset); };
  for (std::size_t offset : {2000, 2002, 2004, 2010, 2012}) EXPECT_TRUE(threads::spin_wait_at(at(offset))) << offset;
  EXPECT_FALSE(threads::spin_wait_at(at(100))) << "endbr64";
  EXPECT_FALSE(threads::spin_wait_at(at(104))) << "rep movsb";
  EXPECT_FALSE(threads::spin_wait_at(at(2100))) << "far from the loop";
  EXPECT_FALSE(threads::spin_wait_at(at(0))) << "nothing but nops from the page's first byte";
  page[4094] = 0xF3;
  EXPECT_TRUE(threads::spin_wait_at(at(4094))) << "a pause at the page's end";
  page[4094] = 0x90;
}

TEST(SettleDelays, AThreadInterruptedInASpinWaitIsCreditedInsteadOfPausing) {
  // The spin lock's waiter: another thread's samples in the line raised the global clock while it
  // spun on the lock. Coz's rule for a blocked waiter applies: it owes nothing for the wait. The
  // same thread interrupted in ordinary code pays.
  alignas(4096) static uint8_t code[4096];
  std::memset(code, 0x90, sizeof(code));
  code[1000] = 0xF3;  // pause at 1000
  delays::GlobalDelays global;
  threads::ThreadState waiter;
  waiter.sampler = std::make_unique<FakeSampler>();
  start_experiment(global, 2 * kMs, 0x1000, 0x1100);
  global.global_ns.store(global.epoch_start_ns.load() + 2 * kMs);  // the holder's sample in the line
  threads::settle_delays(global, waiter, reinterpret_cast<uint64_t>(code + 1002));
  EXPECT_EQ(waiter.delays.local_ns.load(), global.global_ns.load()) << "credited";
  EXPECT_EQ(waiter.delays.paused_ns.load(), 0u) << "without a pause";
  global.global_ns.fetch_add(kMs / 2);
  threads::settle_delays(global, waiter, reinterpret_cast<uint64_t>(code + 3000));
  EXPECT_EQ(waiter.delays.local_ns.load(), global.global_ns.load());
  EXPECT_GE(waiter.delays.paused_ns.load(), kMs / 4) << "outside a spin-wait it pays";
}

TEST(SettleDelays, ANudgesDeliveryCountsAsPaid) {
  // A nudge interrupts a running thread (10-25 us a signal in this VM) that the baselines never
  // interrupt: a mutex's holder lost that inside its critical section, on top of the pause the nudge
  // asked for, and a line that does not matter came out at -1.5% to -2%.
  delays::GlobalDelays global;
  threads::ThreadState thread;
  start_experiment(global, 4 * kMs, 0x1000, 0x1100);
  global.global_ns.fetch_add(30000);  // another thread's sample in the line: 30 us owed
  threads::settle_delays(global, thread, 0, /*nudge_ns=*/50000);
  EXPECT_EQ(thread.delays.paused_ns.load(), 0u) << "the nudge's 50 us of delivery paid the 30 us owed";
  EXPECT_EQ(thread.delays.local_ns.load(), global.global_ns.load());
  EXPECT_EQ(thread.delays.excess_ns, 20000u) << "the rest pays toward the next debt";

  threads::ThreadState waited;  // a delivery longer than any signal's: it waited for a CPU meanwhile
  global.global_ns.fetch_add(30000);
  threads::settle_delays(global, waited, 0, threads::NudgeTable::kMaxNudgeDeliveryNs + 1);
  EXPECT_GE(waited.delays.paused_ns.load(), 30000u) << "not paid by the nudge: it pauses";
}

TEST(SettleDelays, ANudgedPauseCountsItsHandlersWholeTimeAsPaid) {
  // A nudge's handler scans the thread's samples and reads its clocks and code before it sleeps, and
  // the baselines never run it: ~17 us a pause in this VM beside the sleep. Uncounted, a thread
  // nudged at each of another's samples lost it from its work on top of the delay it paid (holdout
  // `indep`, whose helper's line came out at -5% to -11% for 0, with the CPU bound's share).
  delays::GlobalDelays global;
  threads::ThreadState thread;
  start_experiment(global, 4 * kMs, 0x1000, 0x1100);
  global.global_ns.fetch_add(kMs / 2);  // another thread's sample in the line
  const uint64_t entered = os::monotonic_ns() - 3 * kMs;  // a handler that has run 3 ms so far
  threads::settle_delays(global, thread, 0, /*nudge_ns=*/0, /*nudge_entry_ns=*/entered);
  EXPECT_GE(thread.delays.paused_ns.load(), kMs / 2) << "it sleeps what it owes";
  EXPECT_GE(thread.delays.excess_ns, 3 * kMs) << "the handler's time before the sleep pays toward the next debt";
  EXPECT_GT(global.paused_cpu_ns.load(), 0u) << "the sleep's system calls are whatif's CPU time, not the program's";
  global.global_ns.fetch_add(2 * kMs);
  threads::settle_delays(global, thread);
  EXPECT_EQ(thread.delays.local_ns.load(), global.global_ns.load());
  EXPECT_GE(thread.delays.excess_ns, kMs) << "the next 2 ms were paid from it, without a sleep";
}

TEST(SettleDelays, ASleepingPauseCountsItsCpuTimeAndItsNudgesDeliveryAsWhatifs) {
  // The CPU time a sleeping pause takes (its system calls and context switches, ~80 us a pause here
  // with the nudge's delivery) was counted as the program's: it raised the CPU bound of the
  // experiments that paused (experiment::delay_within_cpu_bound), which then cut up to 4 ms of
  // delay in 100 from a program as busy as its CPUs (holdout `indep`: -5% to -11% for 0).
  delays::GlobalDelays global;
  threads::ThreadState thread;
  start_experiment(global, 4 * kMs, 0x1000, 0x1100);
  global.global_ns.fetch_add(kMs);
  threads::settle_delays(global, thread, 0, /*nudge_ns=*/50000, /*nudge_entry_ns=*/os::monotonic_ns());
  EXPECT_GE(thread.delays.paused_ns.load(), kMs / 2);
  EXPECT_GE(global.paused_cpu_ns.load(), 50000u) << "the nudge's delivery took the thread's CPU";
  const uint64_t counted = global.paused_cpu_ns.load();
  threads::settle_delays(global, thread);
  EXPECT_EQ(global.paused_cpu_ns.load(), counted) << "nothing owed, no pause: nothing is whatif's";
  threads::ThreadState late;  // a delivery that waited 50 ms for a CPU: the thread was not running
  threads::settle_delays(global, late, 0, /*nudge_ns=*/50 * kMs, os::monotonic_ns());
  EXPECT_GT(late.delays.paused_ns.load(), 0u);
  EXPECT_LT(global.paused_cpu_ns.load() - counted, 25 * kMs) << "only its pause's own CPU time";
}

/// A thread that runs until destroyed with SIGURG blocked, so that nudges sent to it stay pending
/// (it inherits the mask the constructor sets; the destructor restores the caller's).
class NudgeTarget {
 public:
  NudgeTarget() {
    sigemptyset(&block_);
    sigaddset(&block_, SIGURG);
    pthread_sigmask(SIG_BLOCK, &block_, &saved_);
    thread_ = std::thread([this] {
      tid_.store(os::gettid());
      while (!done_.load()) sched_yield();
    });
    while (tid_.load() == 0) sched_yield();
  }
  ~NudgeTarget() {
    done_.store(true);
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  NudgeTarget(const NudgeTarget&) = delete;
  NudgeTarget& operator=(const NudgeTarget&) = delete;
  pid_t tid() const { return tid_.load(); }

 private:
  sigset_t block_{}, saved_{};
  std::atomic<pid_t> tid_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(NudgeTable, ANudgeStampsWhenItWasSentOnceUntilItsHandlerTakesIt) {
  // The receiving handler measures the nudge's delivery from the first pending send (signals of one
  // number merge into one delivery); a send that fails leaves no stamp behind for the next one.
  NudgeTarget helper;
  threads::ThreadState self, target, gone;
  target.tid = helper.tid();
  gone.tid = 0x7ffffff0;  // no such thread
  threads::NudgeTable table;
  table.enter(&self, SIGURG);
  table.enter(&target, SIGURG);
  table.enter(&gone, SIGURG);
  const uint64_t before = os::monotonic_ns();
  for (auto* state : {&target, &gone}) state->delays.last_sample_ns.store(before);  // running
  EXPECT_EQ(table.nudge_owing(&self, 1000), 1u) << "the helper owes and runs; the other thread is gone";
  const uint64_t first = target.delays.nudged_at_ns.load();
  EXPECT_GE(first, before);
  EXPECT_EQ(gone.delays.nudged_at_ns.load(), 0u) << "its send failed";
  table.nudge_owing(&self, 1000);
  EXPECT_EQ(target.delays.nudged_at_ns.load(), first) << "the first pending nudge stands for both";
  for (auto* state : {&self, &target, &gone}) table.leave(state);
}

TEST(NudgeTable, AThreadRunningTheLineItselfIsNotNudged) {
  // Its own next sample in the line credits it, as Coz's threads catch up at their samples. Nudged,
  // it paused for the other thread's sample and then raised the global clock by its own: twice the
  // pauses, each costing the thread time that no clock counts.
  NudgeTarget helper;
  threads::ThreadState self, in_line, elsewhere;
  in_line.tid = helper.tid();
  elsewhere.tid = helper.tid();
  threads::NudgeTable table;
  table.enter(&self, SIGURG);
  table.enter(&in_line, SIGURG);
  const uint64_t now = os::monotonic_ns();
  in_line.delays.last_sample_ns.store(now);
  in_line.delays.in_selected_line.store(true);
  EXPECT_EQ(table.nudge_owing(&self, 1000), 0u) << "its newest sample was in the line";
  EXPECT_EQ(in_line.delays.nudged_at_ns.load(), 0u);
  in_line.delays.in_selected_line.store(false);
  EXPECT_EQ(table.nudge_owing(&self, 1000), 1u) << "it left the line: it owes and pauses now";
  table.leave(&in_line);
  table.enter(&elsewhere, SIGURG);
  elsewhere.delays.last_sample_ns.store(now);
  EXPECT_EQ(table.nudge_owing(&self, 1000), 1u);
  for (auto* state : {&self, &elsewhere}) table.leave(state);
}

TEST(SettleDelays, WhatSendingNudgesCostsTheLinesThreadDelaysTheOthers) {
  // The thread that runs the line sends the nudges (~20 us a signal to another CPU in this VM), and
  // only while the line is sped up: that time is added to the clocks, so every other thread is
  // delayed as long. The profiler thread's credits nudge too, but their cost is not the line's.
  NudgeTarget helper;
  delays::GlobalDelays global;
  threads::ThreadState line, other;
  other.tid = helper.tid();
  threads::nudge_table().enter(&line, SIGURG);
  threads::nudge_table().enter(&other, SIGURG);
  start_experiment(global, 4 * kMs, 0x1000, 0x1100);
  other.delays.last_sample_ns.store(os::monotonic_ns());  // running, so it is nudged
  threads::credit_selected(global, line, 1, /*by_owner=*/true);
  const uint64_t sent_cost = global.global_ns.load() - 4 * kMs;
  EXPECT_GT(sent_cost, 0u) << "the nudge's send is delay too";
  EXPECT_LT(sent_cost, 4 * kMs) << "a signal's send, not another sample's delay";
  EXPECT_EQ(line.delays.local_ns.load(), global.global_ns.load()) << "the line's thread does not pay for it";

  const uint64_t before = global.global_ns.load();
  threads::credit_selected(global, line, 1);  // the profiler credits a sample of the line's thread
  EXPECT_EQ(global.global_ns.load(), before + 4 * kMs) << "the profiler's sending is not the line's time";
  threads::nudge_table().leave(&line);
  threads::nudge_table().leave(&other);
  threads::nudge_table().quiesce();
}

TEST(PerfSwitchCost, IsMeasuredWhereSamplingEventsOpen) {
  // The adaptive sampler's thresholds come from this figure (sampling/switch_rule.h): a thread whose
  // voluntary switches would cost more than 3% of its CPU time moves to the timer.
  os::SwitchCostProbe probe;
  const int opened = probe.open(kMs);
  if (os::probe_perf_events() != 0) {
    EXPECT_NE(opened, 0) << "no sampling event opens here, nor does the probe: the thresholds stay the defaults";
    EXPECT_EQ(probe.round(4), 0u);
    return;
  }
  ASSERT_EQ(opened, 0);
  uint64_t least = UINT64_MAX;
  for (int round = 0; round < 9; ++round) least = std::min(least, probe.round(16));
  // Stopping and restarting an hrtimer takes microseconds, tens of them in a nested VM; a millisecond
  // would mean the probe timed something else.
  EXPECT_LT(least, kMs) << least << " ns a switch";
  probe.close();
  EXPECT_FALSE(probe.is_open());
  EXPECT_EQ(probe.round(4), 0u) << "a closed probe times nothing";
}

}  // namespace
}  // namespace whatif
