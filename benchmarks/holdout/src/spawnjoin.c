/* Shape: short-lived threads. Each round the main thread creates 2 fresh pthreads that each
 * run line A (1 ms) and exit, runs line B (0.7 ms) itself meanwhile, then joins both.
 * 3 runnable threads on 2 CPUs. One progress visit per round. */
#include "common.h"
#include <pthread.h>

static long a_iters;

static void* worker(void* arg) {
  (void)arg;
  SPIN(a_iters); // @line:A
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long rounds = n_items > 0 ? n_items : 550;
  a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(0.7, scaleB);
  uint64_t t0 = now_ns();
  for (long r = 0; r < rounds; r++) {
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
      if (pthread_create(&th[i], NULL, worker, NULL) != 0) { perror("pthread_create"); return 1; }
    SPIN(b_iters); // @line:B
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
