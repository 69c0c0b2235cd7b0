/* Shape 8: two threads, rounds separated by pthread_barrier. Phase 1 is unbalanced
 * (thread 0 does 2 ms, thread 1 does 1 ms, both on line A); phase 2 is balanced
 * (1 ms each, line B). One progress visit per round (thread 0). */
#include "common.h"
#include <pthread.h>

static pthread_barrier_t bar;
static long rounds, a_unit, b_iters;

static void* worker(void* arg) {
  long id = (long)arg;
  const long a_iters = id == 0 ? 2 * a_unit : a_unit;
  for (long r = 0; r < rounds; r++) {
    SPIN(a_iters); // @line:A
    pthread_barrier_wait(&bar);
    SPIN(b_iters); // @line:B
    pthread_barrier_wait(&bar);
    if (id == 0) COZ_PROGRESS_NAMED("item");
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  rounds = n_items > 0 ? n_items : 330;
  a_unit = ms_iters(1.0, scaleA);
  b_iters = ms_iters(1.0, scaleB);
  pthread_barrier_init(&bar, NULL, 2);
  uint64_t t0 = now_ns();
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void*)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
