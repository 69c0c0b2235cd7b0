/* Shape 12: sleep-paced loop, one thread: compute (line A, 1 ms), nanosleep of 1 ms,
 * then a small other computation (line B, 0.3 ms). One progress visit per iteration. */
#include "common.h"

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 430;
  const long a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(0.3, scaleB);
  const struct timespec one_ms = {0, 1000000};
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    SPIN(a_iters); // @line:A
    nanosleep(&one_ms, NULL);
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
