// Known-answer workload: fan-out with std::async. Per round the main thread runs line B (FLOPS)
// alone, then starts `tasks` std::async(std::launch::async) tasks (a new thread each) that each run
// line A (WORK) and waits for their futures. Three tasks on two CPUs: a round takes about
// t_B + 1.5 t_A, and the tasks' threads are created and joined every round.
#include <cstdint>
#include <future>
#include <vector>

#include "workload.h"

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 1000);
  const double b = wl_arg(argc, argv, "b", 800);
  const int tasks = static_cast<int>(wl_arg(argc, argv, "tasks", 3));
  const long rounds = static_cast<long>(wl_arg(argc, argv, "rounds", 400));
  double x = 1.0;
  std::uint64_t sink = 0;
  const std::uint64_t t0 = wl_now_ns();
  for (long r = 0; r < rounds; ++r) {
    FLOPS(x, b); /* @line:B */
    std::vector<std::future<std::uint64_t>> futures;
    for (int t = 0; t < tasks; ++t) {
      futures.push_back(std::async(std::launch::async, [a, t, r] {
        std::uint64_t acc = static_cast<std::uint64_t>(r * 7 + t);
        WORK(acc, a); /* @line:A */
        return acc;
      }));
    }
    for (auto& f : futures) sink += f.get();
    COZ_PROGRESS_NAMED("item");
  }
  wl_report(wl_now_ns() - t0, static_cast<std::uint64_t>(rounds), 0, sink + static_cast<std::uint64_t>(x));
  return 0;
}
