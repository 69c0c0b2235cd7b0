/* Known-answer workload: several lines interleaved in one thread and one round. Each item runs
   line A (integer LCG), line B (floating point: multiply-add and square root) and line C (a
   pointer chase through an L2-sized ring), then visits the progress point. Single thread, no
   waiting: speeding line X by s gains s * t_X / (t_A + t_B + t_C) for every X. Registered twice
   in bench.py: `mix_fine` (about 10 us per item) and `mix_coarse` (about 3 ms per item), because
   sampling sees a fine-grained interleaving very differently from long stretches of one line. */
#include "workload.h"

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 5);
  const double b = wl_arg(argc, argv, "b", 3);
  const double c = wl_arg(argc, argv, "c", 2);
  const long items = (long)wl_arg(argc, argv, "items", 70000);
  wl_ring_init();
  uint64_t acc = 1, progress = 0;
  double x = 1.0;
  uint32_t idx = 0;
  const uint64_t t0 = wl_now_ns();
  for (long i = 0; i < items; ++i) {
    WORK(acc, a); /* @line:A */
    FLOPS(x, b); /* @line:B */
    WALK(idx, c); /* @line:C */
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  wl_report(wl_now_ns() - t0, progress, 0, acc + (uint64_t)x + idx);
  return 0;
}
