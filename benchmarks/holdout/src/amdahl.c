/* Shape 11: Amdahl. Threads are created once. Per round the main thread runs a serial
 * loop (line A, 2 ms) while the two worker pthreads wait at a pthread_barrier (3 parties);
 * then the TWO WORKERS (not the main thread, which waits at the closing barrier) each run
 * the parallel loop (line B, 2 ms each, on the 2 CPUs); a barrier ends the round.
 * One progress visit per round (main thread, after the closing barrier). */
#include "common.h"
#include <pthread.h>

static pthread_barrier_t start_bar, end_bar;
static long rounds, b_iters;

static void* worker(void* arg) {
  (void)arg;
  for (long r = 0; r < rounds; r++) {
    pthread_barrier_wait(&start_bar);
    SPIN(b_iters); // @line:B
    pthread_barrier_wait(&end_bar);
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  rounds = n_items > 0 ? n_items : 250;
  const long a_iters = ms_iters(2.0, scaleA);
  b_iters = ms_iters(2.0, scaleB);
  pthread_barrier_init(&start_bar, NULL, 3);
  pthread_barrier_init(&end_bar, NULL, 3);
  uint64_t t0 = now_ns();
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (long r = 0; r < rounds; r++) {
    SPIN(a_iters); // @line:A
    pthread_barrier_wait(&start_bar);
    pthread_barrier_wait(&end_bar);
    COZ_PROGRESS_NAMED("item");
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
