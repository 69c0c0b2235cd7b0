/* Shape 3: fork-join. Each round the main thread does serial work (line A, 2 ms),
 * then creates 2 pthreads that split the parallel work (line B, 2 x 2 ms) evenly,
 * and joins them. One progress visit per round. */
#include "common.h"
#include <pthread.h>

static long b_half_iters;

static void* worker(void* arg) {
  (void)arg;
  SPIN(b_half_iters); // @line:B
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long rounds = n_items > 0 ? n_items : 250;
  const long a_iters = ms_iters(2.0, scaleA);
  b_half_iters = ms_iters(2.0, scaleB);
  uint64_t t0 = now_ns();
  for (long r = 0; r < rounds; r++) {
    SPIN(a_iters); // @line:A
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
