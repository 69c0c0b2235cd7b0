/* Shape 4: single thread; per item line A is a loop of libc calls (snprintf, memcpy,
 * strlen) and line B is plain arithmetic. */
#include "common.h"

#ifndef A_REPS
#define A_REPS 7000
#endif

static char src[8192], dst[8192], text[4096], fmt_buf[128];

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 300;
  /* calibrated so line A takes ~1.5 ms per item at scale 1 */
  const long a_reps = (long)(A_REPS * scaleA);
  const long b_iters = ms_iters(1.5, scaleB);
  for (size_t i = 0; i < sizeof src; i++) src[i] = (char)(i * 7 + 1);
  for (size_t i = 0; i + 1 < sizeof text; i++) text[i] = (char)('a' + (i + n) % 26);
  text[sizeof text - 1 - (n & 1)] = 0;
  volatile size_t acc = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    for (long r = 0; r < a_reps; r++) { acc += (size_t)snprintf(fmt_buf, sizeof fmt_buf, "%ld:%.3f:%s", r, r * 0.37, "abc"); memcpy(dst, src, sizeof src); acc += strlen(text); src[r & 4095] ^= dst[(r * 13) & 8191]; } // @line:A
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return (int)(acc & 0) ;
}
