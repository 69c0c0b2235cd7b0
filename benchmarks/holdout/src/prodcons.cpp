// Shape 1: one producer -> 3 consumers through a bounded std::deque (capacity 8)
// guarded by std::mutex + std::condition_variable.
// Line A: producer work (1 ms/item). Line B: consumer work (2 ms/item).
#include "common.h"
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

static std::mutex mu;
static std::condition_variable not_full, not_empty;
static std::deque<long> q;
static const size_t kCap = 8;
static bool done = false;

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 600;
  const long a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(2.0, scaleB);
  uint64_t t0 = now_ns();

  std::thread producer([&] {
    for (long i = 0; i < n; i++) {
      SPIN(a_iters); // @line:A
      std::unique_lock<std::mutex> lk(mu);
      not_full.wait(lk, [] { return q.size() < kCap; });
      q.push_back(i);
      not_empty.notify_one();
    }
    std::lock_guard<std::mutex> lk(mu);
    done = true;
    not_empty.notify_all();
  });

  std::vector<std::thread> consumers;
  for (int c = 0; c < 3; c++) {
    consumers.emplace_back([&] {
      for (;;) {
        {
          std::unique_lock<std::mutex> lk(mu);
          not_empty.wait(lk, [] { return !q.empty() || done; });
          if (q.empty()) return;
          q.pop_front();
          not_full.notify_one();
        }
        SPIN(b_iters); // @line:B
        COZ_PROGRESS_NAMED("item");
      }
    });
  }
  producer.join();
  for (auto& t : consumers) t.join();
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
