// semjthread: C++20 3-stage pipeline on std::jthread and std::counting_semaphore. Stage 1 (main
// thread) makes an item in 0.5 ms; stage 2 (a jthread) does line A, 1.5 ms an item; stage 3
// (another jthread) does line B, 1 ms an item, and visits the progress point. Stages hand over
// through 2 bounded ring buffers of capacity 3, each guarded by the classic pair of
// counting_semaphores (empty slots, full slots); one producer and one consumer per ring, so the
// semaphores alone order the slot accesses. 3 threads on 2 CPUs: stage 2 is the bottleneck
// (1.5 ms an item, and 3 ms of work an item over 2 CPUs is also 1.5 ms).
// Expected at s=60% (scale 0.4): A ~30% (stage 2 becomes 0.6 ms; then 2.1 ms of work an item
// over 2 CPUs, ~1.05 ms, with stage 3's 1 ms), B ~0% (stage 2 still 1.5 ms).
#include "common.h"
#include <semaphore>
#include <thread>

namespace {

constexpr int CAP = 3;

struct Ring {
  std::counting_semaphore<CAP> empty{CAP};
  std::counting_semaphore<CAP> full{0};
  uint64_t slot[CAP] = {};
  int head = 0; // consumer's index
  int tail = 0; // producer's index

  void put(uint64_t v) {
    empty.acquire();
    slot[tail] = v;
    tail = (tail + 1) % CAP;
    full.release();
  }
  uint64_t get() {
    full.acquire();
    uint64_t v = slot[head];
    head = (head + 1) % CAP;
    empty.release();
    return v;
  }
};

Ring r1, r2;

} // namespace

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 600;
  const long s1_iters = ms_iters(0.5, 1.0);
  const long a_iters = ms_iters(1.5, scaleA);
  const long b_iters = ms_iters(1.0, scaleB);
  volatile uint64_t check = 0;
  uint64_t t0 = now_ns();
  {
    std::jthread stage3([&] {
      for (long i = 0; i < n; i++) {
        uint64_t v = r2.get();
        SPIN(b_iters); // @line:B
        check = check + v;
        COZ_PROGRESS_NAMED("item");
      }
    });
    std::jthread stage2([&] {
      for (long i = 0; i < n; i++) {
        uint64_t v = r1.get();
        SPIN(a_iters); // @line:A
        r2.put(v * 3 + 1);
      }
    });
    for (long i = 0; i < n; i++) {
      SPIN(s1_iters);
      r1.put((uint64_t)i);
    }
  } // jthreads join here
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return (int)(check & 0);
}
