/* One thread whose work repeats exactly every millisecond of its CPU time, half of it in each of two
   lines: each line runs until the thread's CPU clock reaches the next half-millisecond boundary. A
   sampler with a fixed 1-ms period of CPU time then takes every sample at the same point of the
   cycle, in one line, whichever the first sample's phase picked. Usage: strobe [milliseconds=1500]. */
#include <whatif.h>

#include "itest.h"

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  uint64_t acc = 1;
  long rounds = 0;
  while (itest_now_ns() < deadline) {
    uint64_t ms = itest_thread_cpu_ns() / 1000000ULL;
    uint64_t middle = ms * 1000000ULL + 500000ULL, end = (ms + 1) * 1000000ULL;
    while (itest_thread_cpu_ns() < middle) WORK(acc, 10); /* @first */
    while (itest_thread_cpu_ns() < end) WORK(acc, 10); /* @second */
    COZ_PROGRESS_NAMED("round");
    ++rounds;
  }
  printf("rounds=%ld sink=%llu\n", rounds, (unsigned long long)(acc & 1));
  return 0;
}
