// Shape 2: four std::threads on a 2-CPU machine; each repeatedly does non-critical
// work (line A, 1 ms) then a std::mutex-protected critical section (line B, 1 ms).
#include "common.h"
#include <mutex>
#include <thread>
#include <vector>

static std::mutex big_lock;

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long per_thread = n_items > 0 ? n_items : 250;
  const long a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(1.0, scaleB);
  uint64_t t0 = now_ns();
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; t++) {
    workers.emplace_back([&] {
      for (long i = 0; i < per_thread; i++) {
        SPIN(a_iters); // @line:A
        {
          std::lock_guard<std::mutex> g(big_lock);
          SPIN(b_iters); // @line:B
        }
        COZ_PROGRESS_NAMED("item");
      }
    });
  }
  for (auto& w : workers) w.join();
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
