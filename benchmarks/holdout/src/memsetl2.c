/* Shape 13: single thread; per round line A calls memset on an L2-sized buffer (256 KiB)
 * A_CALLS x scaleA times (the last call covers the fractional part of the buffer, so the
 * time scales continuously), ~1.2 ms at scale 1; line B is a plain arithmetic loop
 * (0.9 ms). An empty asm with a memory clobber after each memset keeps the stores.
 * One progress visit per round. */
#include "common.h"

#ifndef A_CALLS
#define A_CALLS 720
#endif
#define BUF_BYTES (256 * 1024)

static unsigned char buf[BUF_BYTES];

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 475;
  /* calibrated so line A takes ~1.2 ms per round at scale 1 */
  const double a_calls = A_CALLS * scaleA;
  const long a_full = (long)a_calls;
  const size_t a_tail = (size_t)((a_calls - (double)a_full) * BUF_BYTES);
  const long b_iters = ms_iters(0.9, scaleB);
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    for (long r = 0; r < a_full; r++) { memset(buf, (int)(i + r), BUF_BYTES); __asm__ volatile("" ::: "memory"); } memset(buf, (int)i, a_tail); __asm__ volatile("" ::: "memory"); // @line:A
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  volatile unsigned char sink = buf[(size_t)n % BUF_BYTES];
  (void)sink;
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
