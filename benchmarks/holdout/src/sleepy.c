/* Shape 5: sleep-paced loop, one thread: compute (line A, 1 ms), usleep(1000),
 * then a little more compute (line B, 0.5 ms). One progress visit per iteration. */
#include "common.h"
#include <unistd.h>

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 400;
  const long a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(0.5, scaleB);
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    SPIN(a_iters); // @line:A
    usleep(1000);
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
