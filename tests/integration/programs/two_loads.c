/* A server's day: a load (items of `work`, a progress point each) for `load_ms`, an idle pause of
   `pause_ms` (a sleep: no CPU, no progress), then the same load again.
   Usage: two_loads [load_ms=800] [pause_ms=1500]. */
#include <whatif.h>

#include "itest.h"

static uint64_t load(uint64_t acc, uint64_t ms) {
  uint64_t until = itest_now_ns() + ms * 1000000ULL;
  while (itest_now_ns() < until) {
    WORK(acc, 200); /* @work */
    COZ_PROGRESS_NAMED("item");
  }
  return acc;
}

int main(int argc, char** argv) {
  uint64_t load_ms = (uint64_t)itest_arg(argc, argv, 1, 800);
  long pause_ms = itest_arg(argc, argv, 2, 1500);
  uint64_t acc = load(1, load_ms);
  struct timespec pause = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  acc = load(acc, load_ms);
  printf("two loads done sink=%llu\n", (unsigned long long)(acc & 1));
  return 0;
}
