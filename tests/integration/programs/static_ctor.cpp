// Threads created before main, from a static constructor, and a progress point visited inside that
// constructor while it runs for a while. main joins the constructor's threads and checks their work.
// Usage: static_ctor [constructor_ms=600] [main_ms=600].
#include <pthread.h>
#include <whatif.h>

#include <cstdio>
#include <cstdlib>

#include "itest.h"

namespace {

constexpr int kThreads = 3;
uint64_t g_main_deadline;

void* early_worker(void* arg) {
  uint64_t acc = reinterpret_cast<uintptr_t>(arg);
  long rounds = 0;
  while (itest_now_ns() < g_main_deadline) {
    WORK(acc, 200); /* @early-work */
    COZ_PROGRESS_NAMED("early-thread");
    ++rounds;
  }
  return reinterpret_cast<void*>(rounds);
}

struct StartEarly {
  pthread_t threads[kThreads];
  long constructor_visits = 0;
  StartEarly() {
    const char* ctor_ms = std::getenv("ITEST_CTOR_MS");
    const char* main_ms = std::getenv("ITEST_MAIN_MS");
    uint64_t now = itest_now_ns();
    uint64_t ctor_deadline = now + (ctor_ms ? std::atol(ctor_ms) : 600) * 1000000ull;
    g_main_deadline = ctor_deadline + (main_ms ? std::atol(main_ms) : 600) * 1000000ull;
    for (int i = 0; i < kThreads; ++i) {
      ITEST_CHECK(pthread_create(&threads[i], nullptr, early_worker, reinterpret_cast<void*>(i + 1)) == 0, "create");
    }
    uint64_t acc = 5;
    while (itest_now_ns() < ctor_deadline) {
      WORK(acc, 200); /* @ctor-work */
      COZ_PROGRESS_NAMED("in-constructor");
      ++constructor_visits;
    }
  }
} g_start_early;

}  // namespace

int main() {
  long total = 0;
  for (pthread_t thread : g_start_early.threads) {
    void* rounds = nullptr;
    pthread_join(thread, &rounds);
    ITEST_CHECK(reinterpret_cast<long>(rounds) > 0, "an early thread did no work");
    total += reinterpret_cast<long>(rounds);
  }
  ITEST_CHECK(g_start_early.constructor_visits > 0, "the constructor did no work");
  std::printf("early rounds=%ld constructor visits=%ld\n", total, g_start_early.constructor_visits);
  return 0;
}
