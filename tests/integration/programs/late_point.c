/* A server's shape for -p: a busy start-up phase (`warm`, CPU, no progress: a load's set phase, a
   cache fill) of `warm_ms`, then a loop whose line `item` is the progress point for -p, `items`
   times. Usage: late_point [warm_ms=400] [items=3000]. */
#include "itest.h"

int main(int argc, char** argv) {
  uint64_t warm_until = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 400) * 1000000ULL;
  long items = itest_arg(argc, argv, 2, 3000);
  uint64_t acc = 1;
  while (itest_now_ns() < warm_until) {
    WORK(acc, 100); /* @warm */
  }
  for (long i = 0; i < items; ++i) {
    WORK(acc, 300);
    acc += (uint64_t)i; /* @item */
  }
  printf("items=%ld sink=%llu\n", items, (unsigned long long)(acc & 1));
  return 0;
}
