// Known-answer workload: fan-out to a fixed pool. Three std::thread workers live for the whole run;
// per round the main thread runs line B (FLOPS) alone, then hands one task to each worker (a
// std::mutex, two std::condition_variables and a round counter) and waits until all three are done.
// Each task runs line A (WORK). Three tasks on two CPUs, as asyncfan's, but no thread is born per
// round: the third worker to wake waits for a CPU until one of the first two finishes.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "workload.h"

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 1000);
  const double b = wl_arg(argc, argv, "b", 800);
  const long rounds = static_cast<long>(wl_arg(argc, argv, "rounds", 400));
  constexpr int kWorkers = 3;
  std::mutex mutex;
  std::condition_variable go, done;
  long round = -1;
  int pending = 0;
  bool stop = false;
  std::uint64_t sink = 0;
  std::vector<std::thread> pool;
  for (int w = 0; w < kWorkers; ++w) {
    pool.emplace_back([&, w] {
      for (long seen = -1;;) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          go.wait(lock, [&] { return stop || round != seen; });
          if (stop) return;
          seen = round;
        }
        std::uint64_t acc = static_cast<std::uint64_t>(seen * 7 + w);
        WORK(acc, a); /* @line:A */
        std::lock_guard<std::mutex> lock(mutex);
        sink += acc;
        if (--pending == 0) done.notify_one();
      }
    });
  }
  double x = 1.0;
  const std::uint64_t t0 = wl_now_ns();
  for (long r = 0; r < rounds; ++r) {
    FLOPS(x, b); /* @line:B */
    {
      std::lock_guard<std::mutex> lock(mutex);
      pending = kWorkers;
      round = r;
    }
    go.notify_all();
    {
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return pending == 0; });
    }
    COZ_PROGRESS_NAMED("item");
  }
  const std::uint64_t elapsed = wl_now_ns() - t0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  go.notify_all();
  for (std::thread& worker : pool) worker.join();
  wl_report(elapsed, static_cast<std::uint64_t>(rounds), 0, sink + static_cast<std::uint64_t>(x));
  return 0;
}
