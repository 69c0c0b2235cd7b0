// Known-answer workload: a two-stage C++ pipeline (std::thread, std::mutex, two
// std::condition_variable, a bounded queue of 4), coarse: milliseconds per item. Stage 1 runs line A
// (integer LCG, about 1.4 ms), stage 2 line B (pointer chase, about 2 ms) and visits the progress
// point. Throughput = 1 / max(t_A, t_B): speeding B by s gains min(s t_B, t_B - t_A) / t_B (30% at
// most: then A is the bottleneck); speeding A gains nothing. Built without -fno-omit-frame-pointer,
// like most user code; libstdc++'s condition_variable waits in pthread_cond_wait / futex.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "workload.h"

namespace {

constexpr int kQueueCap = 4;

struct Queue {
  std::mutex lock;
  std::condition_variable not_empty, not_full;
  std::uint64_t slots[kQueueCap] = {};
  int head = 0, count = 0;

  void push(std::uint64_t v) {
    std::unique_lock<std::mutex> g(lock);
    not_full.wait(g, [this] { return count < kQueueCap; });
    slots[(head + count) % kQueueCap] = v;
    ++count;
    not_empty.notify_one();
  }
  std::uint64_t pop() {
    std::unique_lock<std::mutex> g(lock);
    not_empty.wait(g, [this] { return count > 0; });
    std::uint64_t v = slots[head];
    head = (head + 1) % kQueueCap;
    --count;
    not_full.notify_one();
    return v;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 1050);
  const double b = wl_arg(argc, argv, "b", 1600);
  const long items = static_cast<long>(wl_arg(argc, argv, "items", 450));
  wl_ring_init();
  Queue q;
  std::uint64_t sink = 0;
  const std::uint64_t t0 = wl_now_ns();
  std::thread stage1([&] {
    std::uint64_t acc = 1;
    for (long i = 0; i < items; ++i) {
      WORK(acc, a); /* @line:A */
      q.push(acc);
    }
  });
  std::thread stage2([&] {
    std::uint32_t idx = 0;
    for (long i = 0; i < items; ++i) {
      std::uint64_t v = q.pop();
      WALK(idx, b); /* @line:B */
      sink += v + idx;
      COZ_PROGRESS_NAMED("item");
    }
  });
  stage1.join();
  stage2.join();
  wl_report(wl_now_ns() - t0, static_cast<std::uint64_t>(items), 0, sink);
  return 0;
}
