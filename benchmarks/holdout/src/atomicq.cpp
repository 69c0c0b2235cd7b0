// Shape: C++20 atomics only. 3 std::thread workers (on typically 2 CPUs) sleep in
// std::atomic::wait on a round counter. Per round the main thread first runs line B (~0.8 ms)
// alone, then resets the shared task counter, bumps the round counter and notify_all()s; the
// workers pull task indices with fetch_add on a shared std::atomic<int> and each task is line A
// (~0.2 ms), 12 tasks a round (2.4 ms of CPU: ~1.2 ms on 2 CPUs); the worker finishing the 12th
// task notify_all()s a done counter, on which the main thread waits with std::atomic::wait.
// One progress visit per round (main thread). Serial phases: round = 0.8 + 2.4 / 2 = 2.0 ms.
// Expected at s=60%: A: 0.8 + 0.96 / 2 = 1.28 ms -> ~36%; B: 0.32 + 1.2 = 1.52 ms -> ~24%.
#include "common.h"
#include <atomic>
#include <thread>
#include <vector>

static constexpr int kTasks = 12;
static constexpr int kWorkers = 3;

static std::atomic<long> round_no{0};  // bumped once per round; -1 asks the workers to stop
static std::atomic<int> next_task{kTasks};
static std::atomic<int> done{0};
static long a_iters;

static void worker() {
  long seen = 0;
  for (;;) {
    long r;
    while ((r = round_no.load(std::memory_order_acquire)) == seen) round_no.wait(seen, std::memory_order_acquire);
    if (r < 0) return;
    seen = r;
    for (int t; (t = next_task.fetch_add(1, std::memory_order_acq_rel)) < kTasks;) {
      SPIN(a_iters); // @line:A
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == kTasks) done.notify_all();
    }
  }
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long rounds = n_items > 0 ? n_items : 450;
  a_iters = ms_iters(0.2, scaleA);
  const long b_iters = ms_iters(0.8, scaleB);
  uint64_t t0 = now_ns();
  std::vector<std::thread> ws;
  for (int i = 0; i < kWorkers; i++) ws.emplace_back(worker);
  for (long r = 1; r <= rounds; r++) {
    SPIN(b_iters); // @line:B
    done.store(0, std::memory_order_relaxed);
    next_task.store(0, std::memory_order_relaxed);
    round_no.store(r, std::memory_order_release);
    round_no.notify_all();
    for (int d; (d = done.load(std::memory_order_acquire)) < kTasks;) done.wait(d, std::memory_order_acquire);
    COZ_PROGRESS_NAMED("item");
  }
  round_no.store(-1, std::memory_order_release);
  round_no.notify_all();
  for (auto& t : ws) t.join();
  printf("rounds=%ld\n", rounds);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
