// Known-answer workload: C++20 std::barrier (which blocks and wakes through std::atomic::wait, a
// raw futex, never a pthread call). Per round, thread 0 runs line A (WORK) and thread 1 line B
// (FLOPS); the last to arrive runs the barrier's completion, line C (WALK), alone. Period per round:
// max(t_A, t_B) + t_C, so speeding A (the longer) gains until it meets B, B gains nothing, and C
// gains its whole share.
#include <barrier>
#include <cstdint>
#include <thread>

#include "workload.h"

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 1000);
  const double b = wl_arg(argc, argv, "b", 700);
  const double c = wl_arg(argc, argv, "c", 200);
  const long rounds = static_cast<long>(wl_arg(argc, argv, "rounds", 600));
  wl_ring_init();
  std::uint32_t idx = 0;
  auto complete = [&]() noexcept {
    WALK(idx, c); /* @line:C */
    COZ_PROGRESS_NAMED("item");
  };
  std::barrier sync(2, complete);
  std::uint64_t sinks[2] = {0, 0};
  const std::uint64_t t0 = wl_now_ns();
  std::thread other([&] {
    double x = 2.0;
    for (long r = 0; r < rounds; ++r) {
      FLOPS(x, b); /* @line:B */
      sync.arrive_and_wait();
    }
    sinks[1] = static_cast<std::uint64_t>(x);
  });
  std::uint64_t acc = 1;
  for (long r = 0; r < rounds; ++r) {
    WORK(acc, a); /* @line:A */
    sync.arrive_and_wait();
  }
  other.join();
  sinks[0] = acc;
  wl_report(wl_now_ns() - t0, static_cast<std::uint64_t>(rounds), 0, sinks[0] + sinks[1] + idx);
  return 0;
}
