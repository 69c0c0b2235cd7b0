/* Shape: 2 independent worker threads, time mostly inside the allocator. Per item each worker
 * runs line A: A_OPS x scaleA malloc/free pairs of varying sizes (16..2048 bytes) through a
 * ring of 64 live blocks, ~1 ms at scale 1; then line B, a plain arithmetic loop (1 ms).
 * No shared state besides glibc malloc's own. One progress visit per item per worker. */
#include "common.h"
#include <pthread.h>

#ifndef A_OPS
#define A_OPS 25000
#endif
#define RING 64
#define NSIZES 1024

static long n_per, a_ops, b_iters;
static size_t sizes[NSIZES];

static void* worker(void* arg) {
  void* ring[RING] = {0};
  uint64_t sum = 0;
  for (long i = 0; i < n_per; i++) {
    for (long k = 0; k < a_ops; k++) { unsigned j = (unsigned)(k + i) % RING; free(ring[j]); ring[j] = malloc(sizes[(k * 7 + i) % NSIZES]); ((volatile char*)ring[j])[0] = (char)k; } // @line:A
    SPIN(b_iters); // @line:B
    sum += (uintptr_t)ring[0] & 1;
    COZ_PROGRESS_NAMED("item");
  }
  for (int j = 0; j < RING; j++) free(ring[j]);
  *(uint64_t*)arg = sum;
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 900; /* items in all, half per worker */
  n_per = n / 2;
  /* calibrated so line A takes ~1 ms per item at scale 1 */
  a_ops = (long)(A_OPS * scaleA + 0.5);
  b_iters = ms_iters(1.0, scaleB);
  uint64_t x = 88172645463325252ull;
  for (int j = 0; j < NSIZES; j++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; sizes[j] = 16 + (size_t)(x % 2033); }
  uint64_t sums[2];
  uint64_t t0 = now_ns();
  pthread_t th[2];
  for (int t = 0; t < 2; t++) pthread_create(&th[t], NULL, worker, &sums[t]);
  for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return (int)((sums[0] + sums[1]) & 0);
}
