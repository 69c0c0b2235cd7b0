/* Known-answer workload: compute, then sleep. One thread; per item line A (floating point) runs,
   then the thread sleeps `sleep_us` (relative nanosleep: a timer, a rate limiter, polling), then
   line B (integer LCG). The period is t_A + t_B + sleep + the sleep's overshoot; speeding A by s
   gains s * t_A / period (the sleep does not shrink). With no other thread, virtual speedup has
   only the sleeping thread itself to delay: delay owed while it sleeps must still be paid (or the
   sleep counted as already paid), not lost. */
#include "workload.h"

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 500);
  const double b = wl_arg(argc, argv, "b", 100);
  const double sleep_us = wl_arg(argc, argv, "sleep_us", 400);
  const long items = (long)wl_arg(argc, argv, "items", 800);
  uint64_t acc = 1, progress = 0;
  double x = 1.0;
  const uint64_t t0 = wl_now_ns();
  for (long i = 0; i < items; ++i) {
    FLOPS(x, a); /* @line:A */
    wl_sleep_us(sleep_us);
    WORK(acc, b); /* @line:B */
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  wl_report(wl_now_ns() - t0, progress, 0, acc + (uint64_t)x);
  return 0;
}
