// Unit test of how the runtime starts and ends its own threads (libc/real.h: create_runtime_thread):
// every signal blocked in the new thread from its start, and the creating thread's mask left alone
// (a program thread whose sampler is on must go on taking its samples' signals). Test thread.
#include <gtest/gtest.h>
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

}  // namespace
}  // namespace whatif::real
