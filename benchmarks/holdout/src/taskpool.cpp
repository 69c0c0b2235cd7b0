// taskpool: 4 pool threads wait on a condition_variable with wait_for(50 ms, pred) over a deque of
// std::function tasks. Per round the main thread submits 8 tasks (A, 0.25 ms each), does B itself
// (0.5 ms), then waits for the batch (counter + condvar). ~2.5 ms CPU a round on 2 CPUs (~1.25 ms).
// Expected at s=60%: A ~45% (round (0.8+0.5)/2 = 0.65 ms), B ~10% ((2+0.2)/2 = 1.1 ms).
#include "common.h"
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

class Pool {
 public:
  explicit Pool(int n) {
    for (int i = 0; i < n; i++) workers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  void submit(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> g(m_);
      q_.push_back(std::move(f));
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> lk(m_);
        // the common idiom: wake now and then to look at the stop flag
        if (!cv_.wait_for(lk, std::chrono::milliseconds(50), [this] { return stop_ || !q_.empty(); }))
          continue;
        if (q_.empty()) return;  // stop_ and nothing left
        f = std::move(q_.front());
        q_.pop_front();
      }
      f();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

static void task_work() {
  SPIN(ms_iters(0.25, scaleA)); // @line:A
}

static void main_work() {
  SPIN(ms_iters(0.5, scaleB)); // @line:B
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long rounds = n_items > 0 ? n_items : 800;
  const int batch = 8;
  std::mutex dm;
  std::condition_variable dcv;
  int remaining = 0;
  uint64_t t0 = now_ns();
  {
    Pool pool(4);
    for (long r = 0; r < rounds; r++) {
      {
        std::lock_guard<std::mutex> g(dm);
        remaining = batch;
      }
      for (int i = 0; i < batch; i++) {
        pool.submit([&] {
          task_work();
          std::lock_guard<std::mutex> g(dm);
          if (--remaining == 0) dcv.notify_one();
        });
      }
      main_work();
      {
        std::unique_lock<std::mutex> lk(dm);
        dcv.wait(lk, [&] { return remaining == 0; });
      }
      COZ_PROGRESS_NAMED("item");
    }
  }
  printf("rounds=%ld\n", rounds);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
