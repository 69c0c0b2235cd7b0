/* Known-answer workload: more busy threads than CPUs. `threads` C++ std::threads (default: twice
   the CPUs the process may use) take items from one atomic counter; each item runs line A (WORK)
   then line B (FLOPS). The program is CPU bound, so speeding A by s shortens the run by about
   s * t_A / (t_A + t_B) whatever the thread count: a pause must cost the program what the paused
   thread's CPU share would have done, not hand that share to a sibling. */
#include <sched.h>

#include <atomic>
#include <thread>
#include <vector>

#include "workload.h"

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 600);  /* WORK units per item (line A) */
  const double b = wl_arg(argc, argv, "b", 330);  /* FLOPS units per item (line B) */
  const long items = (long)wl_arg(argc, argv, "items", 3000);
  cpu_set_t cpus;
  const int usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  const int threads = (int)wl_arg(argc, argv, "threads", 2.0 * usable);
  std::atomic<long> next{0};
  std::atomic<uint64_t> sink{0};
  const uint64_t t0 = wl_now_ns();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      uint64_t acc = (uint64_t)t + 1;
      double x = 1.0 + t;
      while (next.fetch_add(1, std::memory_order_relaxed) < items) {
        WORK(acc, a); /* @line:A */
        FLOPS(x, b); /* @line:B */
        COZ_PROGRESS_NAMED("item");
      }
      sink.fetch_add(acc + (uint64_t)x, std::memory_order_relaxed);
    });
  }
  for (std::thread& t : pool) t.join();
  wl_report(wl_now_ns() - t0, (uint64_t)items, 0, sink.load());
  return 0;
}
