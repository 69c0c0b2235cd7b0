// Known-answer workload: C++ lock contention with the critical section larger than the outside
// part (60/40), coarse. Two std::threads repeat: line A (floating point, about 0.8 ms) outside a
// std::mutex, then line B (pointer chase, about 1.2 ms) inside it, until `items` critical sections
// are done in total. With t_B > t_A the lock is the bottleneck: period per item =
// max(t_B, (t_A + t_B) / 2). Speeding B by s gains until (1 - s) t_B = t_A (42% at s = 0.5);
// speeding A gains nothing (each thread's A overlaps the other's critical section).
#include <cstdint>
#include <mutex>
#include <thread>

#include "workload.h"

namespace {
std::mutex g_lock;
long g_done = 0;
}  // namespace

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 800);
  const double b = wl_arg(argc, argv, "b", 1200);
  const long items = static_cast<long>(wl_arg(argc, argv, "items", 700));
  wl_ring_init();
  std::uint64_t sinks[2] = {0, 0};
  const std::uint64_t t0 = wl_now_ns();
  auto worker = [&](int id) {
    double x = 1.0 + id;
    std::uint32_t idx = static_cast<std::uint32_t>(id) * 64u * WL_RING_STRIDE;
    for (;;) {
      FLOPS(x, a); /* @line:A */
      {
        std::lock_guard<std::mutex> g(g_lock);
        if (g_done >= items) break;
        WALK(idx, b); /* @line:B */
        ++g_done;
      }
      COZ_PROGRESS_NAMED("item");
    }
    sinks[id] = static_cast<std::uint64_t>(x) + idx;
  };
  std::thread t1(worker, 0), t2(worker, 1);
  t1.join();
  t2.join();
  wl_report(wl_now_ns() - t0, static_cast<std::uint64_t>(g_done), 0, sinks[0] + sinks[1]);
  return 0;
}
