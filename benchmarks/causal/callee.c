/* Known-answer workload: the selected line is inside a called function that is not inlined.
   One thread; per item the loop calls step() (noinline), whose body is line A (a pointer chase),
   then runs line B (integer LCG) in the loop itself. The samples for A have their PC in step(),
   a different function from the progress point's; a profiler that attributes by call site or
   that mis-reads the callee's line table gets this wrong. Single thread, no waiting: speeding A by
   s gains s * t_A / (t_A + t_B), and likewise B. */
#include "workload.h"

static double g_a;

__attribute__((noinline)) static uint32_t step(uint32_t idx) {
  WALK(idx, g_a); /* @line:A */
  __asm__ volatile("" : "+r"(idx));
  return idx;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 30);
  const double b = wl_arg(argc, argv, "b", 20);
  const long items = (long)wl_arg(argc, argv, "items", 15000);
  wl_ring_init();
  uint64_t acc = 1, progress = 0;
  uint32_t idx = 0;
  const uint64_t t0 = wl_now_ns();
  for (long i = 0; i < items; ++i) {
    idx = step(idx);
    WORK(acc, b); /* @line:B */
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  wl_report(wl_now_ns() - t0, progress, 0, acc + idx);
  return 0;
}
