// Unit tests of which kernel-mode samples stand for the program's user IP (sampling/sampler.h):
// only those taken inside a system call, told by the `syscall` instruction before the IP; of the
// kernel-mode sampler writing into the user sampler's ring, and of the one event that samples both
// modes and signals by SIGTRAP; and of a thread's random first sampling period. Test thread.
#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <cstdint>
#include <set>
#include <thread>
#include <string>

#include "os/os.h"
#include "os/perf_event.h"
#include "os/trap_breakpoint.h"
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

/// A drain's samples by mode; a kernel-mode one must stand for its user IP.
struct ModeCounts {
  uint64_t in_user = 0, in_kernel = 0, in_system_calls = 0;
  void add(const os::RawSample& s) {
    if (!s.kernel_mode) {
      ++in_user;
      return;
    }
    ++in_kernel;
    EXPECT_FALSE(os::is_kernel_address(s.ip)) << "a kernel-mode sample stands for its user IP";
    if (counts_as_program(s)) ++in_system_calls;
  }
};

TEST(KernelSamples, TheKernelModeSamplerSharesTheUserSamplersRing) {
  // One mapping per thread: the kernel-mode event's records go to the user event's ring, told
  // apart by kernel_mode and charged to the user IP that entered the kernel.
  if (os::probe_perf_events(/*with_kernel=*/true) != 0) GTEST_SKIP() << "kernel-mode perf sampling is not allowed here";
  constexpr uint64_t kPeriod = 1000000;
  os::PerfSampler user, kernel;
  ASSERT_EQ(user.open(os::gettid(), kPeriod, /*signal=*/0, 1), 0);
  ASSERT_EQ(kernel.open_into(user, os::gettid(), kPeriod, 1, /*kernel_only=*/true), 0);
  EXPECT_TRUE(kernel.is_open());
  ASSERT_EQ(user.enable(), 0);  // the kernel-mode event counts from its open: no ioctl for a new thread
  int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(zero, 0);
  static char buffer[1 << 20];
  ModeCounts counts;
  uint64_t &in_user = counts.in_user, &in_kernel = counts.in_kernel, &in_system_calls = counts.in_system_calls;
  auto visit = [&](const os::RawSample& s) {
    counts.add(s);
    if (s.kernel_mode) {
      EXPECT_NE(s.user, nullptr) << "with the user registers and stack, as the user sampler's";
    }
  };
  struct timespec start {}, now {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile uint64_t spin = 0;
  do {  // part in read(2), part in user mode, drained as often as the profiler would; until 10
        // samples of each or 1 s of CPU (sanitizers slow the user part down)
    ASSERT_GT(::read(zero, buffer, sizeof(buffer)), 0);
    for (int i = 0; i < 100000; ++i) spin = spin + 1;
    user.drain(visit);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((in_user < 10 || in_kernel < 10) &&
           (now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 1000000000L);
  ::close(zero);
  kernel.disable();
  user.disable();
  user.drain(visit);
  EXPECT_EQ(user.lost(), 0u);
  EXPECT_GE(in_user, 10u) << "user time, at a 1 ms period";
  EXPECT_GE(in_kernel, 10u) << "the reads' kernel time, in the same ring";
  EXPECT_GE(in_system_calls, in_kernel / 2) << "most of it inside read(2)";
  std::size_t own = 0;
  EXPECT_EQ(kernel.drain([&](const os::RawSample&) { ++own; }), 0u) << "the kernel-mode sampler maps no ring of its own";
}

namespace trapping {
std::atomic<int> g_traps{0}, g_foreign{0};  // lock-free: written in the handler
void on_trap(int, siginfo_t* info, void*) {
  os::TrapPerfInfo trap;
  if (os::trap_perf_info(info, trap) && trap.data == kSampleTrapCookie) ++g_traps;
  else ++g_foreign;
}
}  // namespace trapping

TEST(KernelSamples, OneTrappingEventSamplesBothModesWithoutCuttingSystemCallsShort) {
  // One event instead of a user sampler and a kernel-mode companion: its samples signal by SIGTRAP,
  // which the kernel raises on the way back to user mode. An O_ASYNC signal raised in a system call
  // cut it short (every 64-MiB read of /dev/zero returned early).
  if (os::probe_trapping_sampler(/*with_kernel=*/true) != 0) {
    EXPECT_NE(os::probe_trapping_sampler(/*with_kernel=*/false), 0) << "sigtrap refused only with kernel mode";
    GTEST_SKIP() << "this kernel cannot signal samples by SIGTRAP (Linux 5.13+), or kernel mode is not allowed";
  }
  struct sigaction action {}, previous {};
  action.sa_sigaction = &trapping::on_trap;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGTRAP, &action, &previous), 0);
  trapping::g_traps = 0;
  trapping::g_foreign = 0;
  constexpr uint64_t kPeriod = 1000000;
  int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(zero, 0);
  constexpr std::size_t kBytes = 16u << 20;
  auto* buffer = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(buffer, MAP_FAILED);
  // Faulted in before sampling: faulting in 4096 pages took 15+ ms of kernel time, and the ring
  // (14 samples with stacks, drained only between reads here) lost samples, in CI and here.
  std::memset(buffer, 1, kBytes);
  os::PerfSampler sampler;
  ASSERT_EQ(sampler.open_trapping(os::gettid(), kPeriod, kSampleTrapCookie, /*with_kernel=*/true), 0);
  ASSERT_EQ(sampler.enable(), 0);
  uint64_t reads = 0, short_reads = 0;
  ModeCounts counts;
  uint64_t &in_user = counts.in_user, &in_kernel = counts.in_kernel, &in_system_calls = counts.in_system_calls;
  auto visit = [&](const os::RawSample& s) { counts.add(s); };
  struct timespec start {}, now {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile uint64_t spin = 0;
  do {  // reads of several periods each, then user time; until 10 samples of each or 2 s of CPU
    ++reads;
    if (::read(zero, buffer, kBytes) != static_cast<ssize_t>(kBytes)) ++short_reads;
    for (int i = 0; i < 200000; ++i) spin = spin + 1;
    sampler.drain(visit);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((in_user < 10 || in_kernel < 10) &&
           (now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 2000000000L);
  sampler.disable();
  sampler.drain(visit);
  ::close(zero);
  munmap(buffer, kBytes);
  sigaction(SIGTRAP, &previous, nullptr);
  EXPECT_EQ(short_reads, 0u) << "of " << reads << " reads: a sample's signal cut a system call short";
  EXPECT_GE(in_user, 10u) << "user time, at a 1 ms period";
  EXPECT_GE(in_kernel, 10u) << "the reads' kernel time, by the same event";
  EXPECT_GE(in_system_calls, in_kernel / 2) << "most of it inside read(2)";
  EXPECT_GE(trapping::g_traps.load(), 10) << "a SIGTRAP with the sampler's cookie per sample (one pending at a time)";
  EXPECT_EQ(trapping::g_foreign.load(), 0) << "no other SIGTRAP";
  EXPECT_EQ(sampler.lost(), 0u);
}

namespace short_first {
std::atomic<PerfThreadSampler*> g_sampler{nullptr};
std::atomic<int> g_signals{0};
void on_sample(int, siginfo_t* info, void* context) {
  os::TrapPerfInfo trap;
  if (info->si_signo == SIGTRAP && !(os::trap_perf_info(info, trap) && trap.data == kSampleTrapCookie)) return;
  ++g_signals;
  if (PerfThreadSampler* sampler = g_sampler.load()) sampler->on_signal(info, context);
}
}  // namespace short_first

TEST(KernelSamples, AThreadWhoseFirstPeriodIsShortDoesNotFloodItsRing) {
  // Bug: a thread whose random first period came out near the 20-us floor, on the trapping event
  // that samples kernel mode too, never got back to user mode to set its whole period: each expiry
  // in the interrupt's exit queued the trap again (~40 us an interrupt in this VM), and 2.5-ms
  // threads filled their rings (15 samples with stacks) and lost 10 to 120 more, which set whole
  // experiments aside. Such a thread samples user mode by trapping and the kernel by the
  // signal-less companion, which starts at a whole period.
  if (os::probe_trapping_sampler(/*with_kernel=*/true) != 0) GTEST_SKIP() << "no trapping samplers here";
  struct sigaction action {}, previous_trap {}, previous_rt {};
  action.sa_sigaction = &short_first::on_sample;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  const int rt_signal = SIGRTMIN + 5;
  ASSERT_EQ(sigaction(SIGTRAP, &action, &previous_trap), 0);
  ASSERT_EQ(sigaction(rt_signal, &action, &previous_rt), 0);
  set_trap_sampling(true);
  set_first_period(20000);
  uint64_t total_samples = 0, lost = 0, kernel_sampled = 0;
  for (int round = 0; round < 20; ++round) {
    PerfThreadSampler sampler(/*with_kernel=*/true);
    std::thread thread([&] {
      short_first::g_sampler = &sampler;
      ASSERT_EQ(sampler.start(os::gettid(), 1000000, rt_signal), 0);
      kernel_sampled += sampler.samples_kernel() && sampler.trapping() ? 1 : 0;
      int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
      static thread_local char buffer[64 << 10];
      struct timespec start {}, now {};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
      volatile uint64_t spin = 0;
      do {  // 3 ms of CPU, part of it in read(2)
        ASSERT_GT(::read(zero, buffer, sizeof(buffer)), 0);
        for (int i = 0; i < 2000; ++i) spin = spin + 1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
      } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 3000000L);
      sampler.stop();
      short_first::g_sampler = nullptr;
      ::close(zero);
    });
    thread.join();
    uint64_t samples = sampler.drain([](void*, const os::RawSample&) {}, nullptr);
    total_samples += samples;
    lost += sampler.lost();
  }
  set_first_period(0);
  set_trap_sampling(false);
  sigaction(SIGTRAP, &previous_trap, nullptr);
  sigaction(rt_signal, &previous_rt, nullptr);
  EXPECT_EQ(lost, 0u) << "samples dropped from full rings";
  // 20 threads of 3 ms of CPU each at a 1-ms period: 60-80 samples, user and kernel mode. With the
  // flood: 230-270 (many rings full at 15).
  EXPECT_LE(total_samples, 150u) << "20 threads of 3 ms of CPU at a 1-ms period";
  EXPECT_GT(short_first::g_signals.load(), 0);
  EXPECT_EQ(kernel_sampled, 20u) << "kernel time is still sampled, by the companion";
}

TEST(PageFaultEntry, IsFoundInKallsymsWithItsEndAtTheNextSymbol) {
  std::string text =
      "ffffffff81000000 T _stext\n"
      "ffffffff81000c60 T asm_exc_page_fault\n"
      "ffffffff81000c90 T asm_int80_emulation\n"
      "ffffffffc0a01000 t helper\t[some_module]\n";
  os::KernelRange range = os::find_page_fault_entry(text.data(), text.size());
  EXPECT_EQ(range.begin, 0xffffffff81000c60u);
  EXPECT_EQ(range.end, 0xffffffff81000c90u);
  EXPECT_TRUE(range.contains(0xffffffff81000c8fu));
  EXPECT_FALSE(range.contains(0xffffffff81000c90u));
  // Before Linux 5.8 the stub was `page_fault`.
  std::string old = "ffffffff81a00b80 T page_fault\nffffffff81a00bb0 T async_page_fault\n";
  range = os::find_page_fault_entry(old.data(), old.size());
  EXPECT_EQ(range.begin, 0xffffffff81a00b80u);
  EXPECT_EQ(range.end, 0xffffffff81a00bb0u);
}

TEST(PageFaultEntry, IsUnknownWhereAddressesAreHiddenOrTheSymbolIsMissing) {
  std::string hidden = "0000000000000000 T asm_exc_page_fault\n0000000000000000 T asm_int80_emulation\n";
  EXPECT_EQ(os::find_page_fault_entry(hidden.data(), hidden.size()).end, 0u) << "kptr_restrict prints zeros";
  std::string missing = "ffffffff81000000 T _stext\nffffffff81000c60 T asm_exc_page_faulty\nffffffff81000c90 T x\n";
  EXPECT_EQ(os::find_page_fault_entry(missing.data(), missing.size()).end, 0u) << "a longer name is another symbol";
  std::string cut = "ffffffff81000c60 T asm_exc_page_fault\nffffffff81000c9";
  EXPECT_EQ(os::find_page_fault_entry(cut.data(), cut.size()).end, 0u) << "the next line is not complete yet";
  EXPECT_FALSE(os::load_page_fault_entry("/nonexistent/kallsyms"));
}

TEST(KernelSamples, APageFaultsKernelTimeStandsForTheFaultingInstruction) {
  // First touches of fresh memory: the kernel allocates and clears a page per fault. Samples taken
  // there come in through the page-fault entry and count as the program's, charged to the user IP.
  if (os::probe_perf_events(/*with_kernel=*/true) != 0) GTEST_SKIP() << "kernel-mode perf sampling is not allowed here";
  if (!os::load_page_fault_entry("/proc/kallsyms")) GTEST_SKIP() << "kallsyms hides the kernel's addresses here";
  ASSERT_TRUE(os::page_fault_entry_known());
  constexpr uint64_t kPeriod = 1000000;
  os::PerfSampler user, kernel;
  ASSERT_EQ(user.open(os::gettid(), kPeriod, /*signal=*/0, 1), 0);
  ASSERT_EQ(kernel.open_into(user, os::gettid(), kPeriod, 1, /*kernel_only=*/true), 0);
  ASSERT_EQ(user.enable(), 0);
  uint64_t in_kernel = 0, in_faults = 0, counted = 0;
  auto visit = [&](const os::RawSample& s) {
    if (!s.kernel_mode) return;
    ++in_kernel;
    EXPECT_FALSE(os::is_kernel_address(s.ip)) << "a kernel-mode sample stands for its user IP";
    if (s.callchain_length > 0) {
      EXPECT_EQ(s.callchain[0], s.ip) << "the user frames, from the IP at kernel entry";
    }
    if (os::in_page_fault_entry(s.kernel_entry)) ++in_faults;
    if (sampling::counts_as_program(s)) ++counted;
  };
  constexpr std::size_t kBytes = 4u << 20;
  struct timespec start {}, now {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    auto* p = static_cast<volatile char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    madvise(const_cast<char*>(p), kBytes, MADV_NOHUGEPAGE);
    for (std::size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
    munmap(const_cast<char*>(p), kBytes);
    user.drain(visit);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while (in_faults < 20 && (now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 2000000000L);
  kernel.disable();
  user.disable();
  user.drain(visit);
  EXPECT_GE(in_faults, 20u) << "of " << in_kernel << " kernel-mode samples";
  EXPECT_GE(counted, in_faults) << "every fault sample counts as the program's";
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
