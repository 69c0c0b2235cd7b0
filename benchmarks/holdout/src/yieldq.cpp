// Shape 16 (session 16): a synchronous request/reply between two std::threads over atomics, each
// side waiting in a std::this_thread::yield() loop (no lock, no futex), as naive C++ and Rust
// (yield_now) code waits: the client prepares a request (A, 0.5 ms) and posts it, the server
// computes the reply (B, 1 ms) and posts it back; one progress visit per reply. Strictly serial:
// at 60%, A gains 0.6 * 0.5 / 1.5 = 20%, B 0.6 * 1 / 1.5 = 40%.
#include "common.h"
#include <atomic>
#include <thread>

static std::atomic<long> requested{0}, replied{0};

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 600;
  const long a_iters = ms_iters(0.5, scaleA);
  const long b_iters = ms_iters(1.0, scaleB);
  uint64_t t0 = now_ns();
  std::thread server([&] {
    for (long i = 1; i <= n; i++) {
      while (requested.load(std::memory_order_acquire) < i) std::this_thread::yield();
      SPIN(b_iters); // @line:B
      replied.store(i, std::memory_order_release);
    }
  });
  for (long i = 1; i <= n; i++) {
    SPIN(a_iters); // @line:A
    requested.store(i, std::memory_order_release);
    while (replied.load(std::memory_order_acquire) < i) std::this_thread::yield();
    COZ_PROGRESS_NAMED("item");
  }
  server.join();
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
