// Unit test of how the runtime starts and ends its own threads (libc/real.h: create_runtime_thread):
// every signal blocked in the new thread from its start, and the creating thread's mask left alone
// (a program thread whose sampler is on must go on taking its samples' signals); a tick that its
// owner ends at once (os::sleep_unless_woken). Test thread.
#include <gtest/gtest.h>
#include <atomic>
#include <pthread.h>
#include <signal.h>

#include "libc/real.h"
#include "os/os.h"

namespace whatif::real {
namespace {

bool same_mask(const sigset_t& a, const sigset_t& b) {
  for (int signal = 1; signal < NSIG; ++signal) {
    if (sigismember(&a, signal) != sigismember(&b, signal)) return false;
  }
  return true;
}

TEST(RuntimeThread, StartsWithEverySignalBlockedAndLeavesTheCallersMaskAlone) {
  resolve();
  sigset_t before, after;
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &before), 0);
  struct Seen {
    sigset_t mask;
  } seen{};
  pthread_t thread;
  ASSERT_EQ(create_runtime_thread(
                &thread,
                [](void* raw) -> void* {
                  ::pthread_sigmask(SIG_SETMASK, nullptr, &static_cast<Seen*>(raw)->mask);
                  return nullptr;
                },
                &seen),
            0);
  ASSERT_EQ(::pthread_join(thread, nullptr), 0);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &after), 0);
  EXPECT_TRUE(same_mask(before, after)) << "the creator's mask is its own";
  // SIGKILL and SIGSTOP cannot be blocked, nor can glibc's internal SIGCANCEL/SIGSETXID.
  for (int signal : {SIGINT, SIGTERM, SIGUSR1, SIGPROF, SIGALRM, SIGRTMIN + 2, SIGRTMAX}) {
    EXPECT_TRUE(sigismember(&seen.mask, signal)) << "signal " << signal << " is blocked in the runtime thread";
  }
}

TEST(RuntimeThread, ATickEndsAsSoonAsItsOwnerWakesIt) {
  // A forked child's forwarder slept out its 1-ms tick before the child could exit (0.5 ms an exit
  // on average, serial in a parent that waits for its children). Here a tick of a minute: the
  // test would hit ctest's limit if the wake were lost.
  resolve();
  struct Shared {
    std::atomic<uint32_t> stop{0};
    uint64_t slept_ns = 0;
  } shared;
  pthread_t thread;
  ASSERT_EQ(create_runtime_thread(
                &thread,
                [](void* raw) -> void* {
                  auto* shared = static_cast<Shared*>(raw);
                  while (shared->stop.load() == 0) shared->slept_ns += os::sleep_unless_woken(shared->stop, 0, 60000000000ull);
                  return nullptr;
                },
                &shared),
            0);
  os::sleep_ns(20000000);  // the tick has most likely started
  shared.stop.store(1);
  os::wake_sleepers(shared.stop);
  ASSERT_EQ(::pthread_join(thread, nullptr), 0);
  EXPECT_LT(shared.slept_ns, 30000000000ull) << "the sleeper was not woken";
  // A word that no longer holds the expected value: no sleep at all.
  EXPECT_LT(os::sleep_unless_woken(shared.stop, 0, 60000000000ull), 30000000000ull);
}

}  // namespace
}  // namespace whatif::real
