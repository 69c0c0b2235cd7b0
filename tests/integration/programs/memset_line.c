/* One thread; per round, one line calls memset on an L2-sized buffer many times (about 55% of the
   time) and the next line is a plain loop (the rest). glibc's memset sets up no frame, so a
   frame-pointer callchain taken inside it skips this line; DWARF unwinding finds it. Built -O2
   without -fno-omit-frame-pointer. Usage: memset_line [milliseconds=1500]. */
#include <whatif.h>

#include "itest.h"

#define BUFFER_BYTES (256 * 1024) /* half this machine's L2, a typical L2 size */
#define MEMSET_NS 1100000ULL      /* per round: 55% memset line */
#define LOOP_NS 900000ULL         /* 45% loop line */

static unsigned char buffer[BUFFER_BYTES];

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  uint64_t acc = 1;
  long rounds = 0, fills = 0;
  /* Each line runs for a set CPU time, so the shares depend neither on the machine's speed nor on
     its load; the clock reads (~1 per 16 memsets or 40 µs of loop) are a small part of either line. */
  while (itest_now_ns() < deadline) {
    uint64_t start = itest_thread_cpu_ns();
    do { for (int i = 0; i < 16; ++i, ++fills) { memset(buffer, (int)fills, sizeof(buffer)); __asm__ volatile("" : : "r"(buffer) : "memory"); } } while (itest_thread_cpu_ns() - start < MEMSET_NS); /* @memset */
    start = itest_thread_cpu_ns();
    do WORK(acc, 40); while (itest_thread_cpu_ns() - start < LOOP_NS); /* @loop */
    COZ_PROGRESS_NAMED("round");
    ++rounds;
  }
  printf("rounds=%ld fills=%ld sink=%llu\n", rounds, fills, (unsigned long long)((acc & 1) + buffer[rounds % BUFFER_BYTES]));
  return 0;
}
