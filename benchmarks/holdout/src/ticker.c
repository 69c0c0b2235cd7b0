/* Shape 15 (session 15): a fixed-rate loop, one thread: every 2 ms, by an absolute deadline
 * (clock_nanosleep TIMER_ABSTIME from one starting time), it computes A (0.6 ms) and B (0.4 ms)
 * and counts an item. The clock sets the rate: neither line gains anything. */
#include "common.h"
#include <time.h>
int main(int argc, char** argv) {
  parse_args(argc, argv);
  long n = n_items > 0 ? n_items : 450;
  long a_iters = ms_iters(0.6, scaleA), b_iters = ms_iters(0.4, scaleB);
  uint64_t t0 = now_ns();
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long i = 0; i < n; i++) {
    SPIN(a_iters); // @line:A
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
    next.tv_nsec += 2000000;
    if (next.tv_nsec >= 1000000000) { next.tv_nsec -= 1000000000; next.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
