/* Known-answer workload: a single thread in two phases. Phase 1 runs line A per item, phase 2 line B.
   Speeding A by s shortens the run by s * t_A: program speedup = s * t_A / T (Coz paper, eq. 8). */
#include "workload.h"

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 1000);  /* work units per phase-1 item (line A) */
  const double b = wl_arg(argc, argv, "b", 1000);  /* work units per phase-2 item (line B) */
  const long n1 = (long)wl_arg(argc, argv, "n1", 800);
  const long n2 = (long)wl_arg(argc, argv, "n2", 1200);
  uint64_t acc = 1, progress = 0;
  const uint64_t t0 = wl_now_ns();
  for (long i = 0; i < n1; ++i) {
    WORK(acc, a); /* @line:A */
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  for (long i = 0; i < n2; ++i) {
    WORK(acc, b); /* @line:B */
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  wl_report(wl_now_ns() - t0, progress, 0, acc);
  return 0;
}
