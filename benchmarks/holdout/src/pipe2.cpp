// Shape 9: two-stage pipeline, one std::thread per stage. Stage 1 (line A, 1.4 ms/item)
// hands items to stage 2 (line B, 2 ms/item) through a bounded std::deque (capacity 4)
// guarded by a std::mutex and two std::condition_variables (not_full, not_empty).
// One progress visit per item completed by stage 2.
#include "common.h"
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

static std::mutex mu;
static std::condition_variable not_full, not_empty;
static std::deque<long> q;
static const size_t kCap = 4;

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 500;
  const long a_iters = ms_iters(1.4, scaleA);
  const long b_iters = ms_iters(2.0, scaleB);
  uint64_t t0 = now_ns();

  std::thread stage1([&] {
    for (long i = 0; i < n; i++) {
      SPIN(a_iters); // @line:A
      std::unique_lock<std::mutex> lk(mu);
      not_full.wait(lk, [] { return q.size() < kCap; });
      q.push_back(i);
      not_empty.notify_one();
    }
  });

  std::thread stage2([&] {
    for (long i = 0; i < n; i++) {
      {
        std::unique_lock<std::mutex> lk(mu);
        not_empty.wait(lk, [] { return !q.empty(); });
        q.pop_front();
        not_full.notify_one();
      }
      SPIN(b_iters); // @line:B
      COZ_PROGRESS_NAMED("item");
    }
  });

  stage1.join();
  stage2.join();
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
