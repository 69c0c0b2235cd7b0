/* A fixed-rate loop: every 2 ms by an absolute deadline from one starting time (clock_nanosleep
   with TIMER_ABSTIME), it computes line `tick-work` (600 units) and counts a progress visit. The
   clock sets the rate, so speeding the line changes nothing. Usage: ticker [ticks=400]. */
#include <time.h>
#include <whatif.h>

#include "itest.h"

int main(int argc, char** argv) {
  long ticks = itest_arg(argc, argv, 1, 400);
  uint64_t acc = 1;
  struct timespec next;
  ITEST_CHECK(clock_gettime(CLOCK_MONOTONIC, &next) == 0, "clock_gettime");
  for (long i = 0; i < ticks; ++i) {
    WORK(acc, 600); /* @tick-work */
    COZ_PROGRESS_NAMED("tick");
    next.tv_nsec += 2000000;
    if (next.tv_nsec >= 1000000000) {
      next.tv_nsec -= 1000000000;
      next.tv_sec++;
    }
    int error;
    while ((error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR) {
    }
    ITEST_CHECK(error == 0, "clock_nanosleep");
  }
  printf("ticker ok: %ld ticks (%llu)\n", ticks, (unsigned long long)(acc & 1));
  return 0;
}
