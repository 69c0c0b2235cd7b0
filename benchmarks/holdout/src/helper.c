/* Shape 7: the line under test (A, 1.5 ms) is inside a noinline helper called from
 * the main loop; line B (1 ms) is in the caller. */
#include "common.h"

static long a_iters;

__attribute__((noinline)) static uint64_t process_item(long i) {
  uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15ull;
  SPIN(a_iters); // @line:A
  __asm__ volatile("" : "+r"(h));
  return h ^ (h >> 29);
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 400;
  a_iters = ms_iters(1.5, scaleA);
  const long b_iters = ms_iters(1.0, scaleB);
  uint64_t sum = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    sum += process_item(i);
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return (int)(sum & 0);
}
