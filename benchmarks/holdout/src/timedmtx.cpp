// Shape: std::timed_mutex (glibc's pthread_mutex_clocklock under try_lock_for). Two std::threads;
// each item does non-critical work (line A, 0.8 ms) then takes the lock with try_lock_for(20 ms),
// retrying until it has it, and runs the critical section (line B, 1.2 ms). The lock is busy
// 2 x 1.2 ms per 2 x 2 ms of thread work: lock-bound. One progress visit per item (per thread).
// Expected at s=60%: A ~0% (the lock sets the pace), B ~40% or more (1.2 -> 0.48 ms a critical
// section; then the threads' own 0.8 + 0.48 ms sets it).
#include "common.h"
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

static std::timed_mutex lock;

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long per_thread = n_items > 0 ? n_items : 400;
  const long a_iters = ms_iters(0.8, scaleA);
  const long b_iters = ms_iters(1.2, scaleB);
  uint64_t t0 = now_ns();
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; t++) {
    workers.emplace_back([&] {
      for (long i = 0; i < per_thread; i++) {
        SPIN(a_iters); // @line:A
        while (!lock.try_lock_for(std::chrono::milliseconds(20))) {
        }
        SPIN(b_iters); // @line:B
        lock.unlock();
        COZ_PROGRESS_NAMED("item");
      }
    });
  }
  for (auto& w : workers) w.join();
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
