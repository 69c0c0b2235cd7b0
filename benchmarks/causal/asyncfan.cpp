// Known-answer workload: fan-out with std::async. Per round the main thread runs line B (FLOPS)
// alone, then starts `tasks` std::async(std::launch::async) tasks (a new thread each) that each run
// line A (WORK) and waits for their futures. Three tasks on two CPUs: a round takes about
// t_B + 1.5 t_A, and the tasks' threads are created and joined every round.
#include <cstdint>
#include <future>
#include <vector>

#include "workload.h"

// Built with -DWL_TRACE (benchmarks/README.md, "asyncfan", session 12), it prints to stderr how long
// the task phase took a round, how long all the tasks were alive together, and when the last task
// began: on two CPUs the third task is queued until one of the first two ends.
#ifdef WL_TRACE
#include <algorithm>
#include <cstdio>
struct TaskSpan {
  std::uint64_t begin = 0, end = 0;
};
#define TRACE(...) __VA_ARGS__
#else
#define TRACE(...)
#endif

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 1000);
  const double b = wl_arg(argc, argv, "b", 800);
  const int tasks = static_cast<int>(wl_arg(argc, argv, "tasks", 3));
  const long rounds = static_cast<long>(wl_arg(argc, argv, "rounds", 400));
  double x = 1.0;
  std::uint64_t sink = 0;
  TRACE(std::vector<TaskSpan> spans(static_cast<std::size_t>(tasks)); double phase_us = 0, together_us = 0, last_us = 0);
  const std::uint64_t t0 = wl_now_ns();
  for (long r = 0; r < rounds; ++r) {
    FLOPS(x, b); /* @line:B */
    TRACE(const std::uint64_t created = wl_now_ns());
    std::vector<std::future<std::uint64_t>> futures;
    for (int t = 0; t < tasks; ++t) {
      futures.push_back(std::async(std::launch::async, [&, a, t, r] {
        TRACE(spans[static_cast<std::size_t>(t)].begin = wl_now_ns());
        std::uint64_t acc = static_cast<std::uint64_t>(r * 7 + t);
        WORK(acc, a); /* @line:A */
        TRACE(spans[static_cast<std::size_t>(t)].end = wl_now_ns());
        return acc;
      }));
    }
    for (auto& f : futures) sink += f.get();
    TRACE({
      std::uint64_t first = ~0ull, last_begin = 0, done = 0, first_end = ~0ull;
      for (const TaskSpan& span : spans) {
        first = std::min(first, span.begin);
        last_begin = std::max(last_begin, span.begin);
        done = std::max(done, span.end);
        first_end = std::min(first_end, span.end);
      }
      phase_us += static_cast<double>(done - first) / 1e3;
      if (first_end > last_begin) together_us += static_cast<double>(first_end - last_begin) / 1e3;
      last_us += static_cast<double>(last_begin - created) / 1e3;
    });
    COZ_PROGRESS_NAMED("item");
  }
  TRACE(std::fprintf(stderr, "task phase %.0f us a round; all %d tasks alive together %.0f us; the last began %.0f us "
                             "after the first was created\n",
                     phase_us / static_cast<double>(rounds), tasks, together_us / static_cast<double>(rounds),
                     last_us / static_cast<double>(rounds)));
  wl_report(wl_now_ns() - t0, static_cast<std::uint64_t>(rounds), 0, sink + static_cast<std::uint64_t>(x));
  return 0;
}
