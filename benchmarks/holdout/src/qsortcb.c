/* Shape: single thread, time in libc's qsort and in a user comparator it calls back. Per item
 * a fresh copy of random keys is made (always the full size), then line A calls qsort on
 * A_CALLS x scaleA chunks of K ints each, ~1 ms at scale 1; line B is a plain arithmetic
 * loop (1 ms). One progress visit per item. */
#include "common.h"

#ifndef A_CALLS
#define A_CALLS 20
#endif
#define K 1024

static int cmp_u32(const void* a, const void* b) {
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 450;
  /* calibrated so line A takes ~1 ms per item at scale 1 */
  const long a_calls = (long)(A_CALLS * scaleA + 0.5);
  const long b_iters = ms_iters(1.0, scaleB);
  const long total = (long)A_CALLS * K;
  uint32_t* src = malloc(sizeof(uint32_t) * total * 8);
  uint32_t* v = malloc(sizeof(uint32_t) * total);
  uint64_t x = 88172645463325252ull;
  for (long j = 0; j < total * 8; j++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; src[j] = (uint32_t)x; }
  uint64_t check = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    memcpy(v, src + (i % 8) * total, sizeof(uint32_t) * total);
    for (long c = 0; c < a_calls; c++) qsort(v + c * K, K, sizeof(uint32_t), cmp_u32); // @line:A
    SPIN(b_iters); // @line:B
    check += v[0];
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  free(src);
  free(v);
  return (int)(check & 0);
}
