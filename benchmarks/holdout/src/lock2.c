/* Shape 10: two pthreads; each repeatedly does non-critical work (line A, 0.8 ms = 40%
 * of an item) then a pthread_mutex-protected critical section (line B, 1.2 ms = 60%).
 * The lock is busy 2 x 1.2 ms per 2 x 2 ms of thread work, so it is the bottleneck.
 * One progress visit per item (per thread). */
#include "common.h"
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long per_thread, a_iters, b_iters;

static void* worker(void* arg) {
  (void)arg;
  for (long i = 0; i < per_thread; i++) {
    SPIN(a_iters); // @line:A
    pthread_mutex_lock(&lock);
    SPIN(b_iters); // @line:B
    pthread_mutex_unlock(&lock);
    COZ_PROGRESS_NAMED("item");
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  per_thread = n_items > 0 ? n_items : 400;
  a_iters = ms_iters(0.8, scaleA);
  b_iters = ms_iters(1.2, scaleB);
  uint64_t t0 = now_ns();
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
