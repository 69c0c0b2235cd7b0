// cvphase: 3 std::threads in lock-step phases, a hand-written generation-counting barrier (std::mutex +
// std::condition_variable, notify_all). Phase 1: thread 0 does A (2 ms), threads 1, 2 do 1 ms unmarked;
// phase 2: all three do B (1 ms each) on 2 CPUs. Round ~3.5 ms ideally (~5 ms measured). Expected at
// s=60%: A ~17% (phase 1: 2 -> max(0.8, 2.8/2) = 1.4 ms), B ~26% (phase 2: 1.5 -> 0.6 ms).
#include "common.h"
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lk(m_);
    unsigned long gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      generation_++;
      cv_.notify_all();
      return;
    }
    cv_.wait(lk, [&] { return generation_ != gen; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_;
  int arrived_ = 0;
  unsigned long generation_ = 0;
};

static void phase1_long() {
  SPIN(ms_iters(2.0, scaleA)); // @line:A
}

static void phase1_short() {
  SPIN(ms_iters(1.0, 1.0));
}

static void phase2() {
  SPIN(ms_iters(1.0, scaleB)); // @line:B
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long rounds = n_items > 0 ? n_items : 220;
  Barrier bar(3);
  uint64_t t0 = now_ns();
  std::vector<std::thread> ts;
  for (int id = 0; id < 3; id++) {
    ts.emplace_back([&, id] {
      for (long r = 0; r < rounds; r++) {
        if (id == 0) phase1_long();
        else phase1_short();
        bar.wait();
        phase2();
        bar.wait();
        if (id == 0) COZ_PROGRESS_NAMED("item");
      }
    });
  }
  for (auto& t : ts) t.join();
  printf("rounds=%ld\n", rounds);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
