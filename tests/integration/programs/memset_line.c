/* One thread; per round, one line calls memset on an L2-sized buffer many times (about 55% of the
   time) and the next line is a plain loop (the rest). glibc's memset sets up no frame, so a
   frame-pointer callchain taken inside it skips this line; DWARF unwinding finds it. Built -O2
   without -fno-omit-frame-pointer. Usage: memset_line [milliseconds=1500]. */
#include <whatif.h>

#include "itest.h"

#define BUFFER_BYTES (256 * 1024) /* half this machine's L2, a typical L2 size */
#define ROUND_NS 2000000ULL       /* each round: ~55% memset line, ~45% loop line */

static unsigned char buffer[BUFFER_BYTES];

static void fill(long times) {
  for (long i = 0; i < times; ++i) {
    memset(buffer, (int)i, sizeof(buffer));
    __asm__ volatile("" : : "r"(buffer) : "memory"); /* every memset happens */
  }
}

int main(int argc, char** argv) {
  uint64_t run_ns = (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  uint64_t acc = 1;
  /* Calibrate so the two lines' shares do not depend on the machine's speed (after touching the
     buffer: its first page faults are not memset's steady cost). */
  fill(10);
  uint64_t memset_ns = UINT64_MAX, unit_ns = UINT64_MAX; /* the fastest of 5: others' noise only adds */
  for (int trial = 0; trial < 5; ++trial) {
    uint64_t start = itest_now_ns();
    fill(20);
    uint64_t fill_ns = (itest_now_ns() - start) / 20 + 1;
    start = itest_now_ns();
    WORK(acc, 400);
    uint64_t work_ns = (itest_now_ns() - start) / 400 + 1;
    memset_ns = fill_ns < memset_ns ? fill_ns : memset_ns;
    unit_ns = work_ns < unit_ns ? work_ns : unit_ns;
  }
  long fills = (long)(ROUND_NS * 55 / 100 / memset_ns) + 1;
  long units = (long)(ROUND_NS * 45 / 100 / unit_ns) + 1;

  uint64_t deadline = itest_now_ns() + run_ns;
  long rounds = 0;
  while (itest_now_ns() < deadline) {
    for (long i = 0; i < fills; ++i) { memset(buffer, (int)i, sizeof(buffer)); __asm__ volatile("" : : "r"(buffer) : "memory"); } /* @memset */
    WORK(acc, units); /* @loop */
    COZ_PROGRESS_NAMED("round");
    ++rounds;
  }
  printf("rounds=%ld fills=%ld units=%ld sink=%llu\n", rounds, fills, units,
         (unsigned long long)((acc & 1) + buffer[rounds % BUFFER_BYTES]));
  return 0;
}
