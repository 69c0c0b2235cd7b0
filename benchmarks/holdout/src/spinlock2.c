/* spinlock2: like lock2, but the lock is a pthread_spinlock_t (waiters spin in user space, no futex
 * sleep). Two pthreads; each item is non-critical work (line A, 0.8 ms = 40% of an item) then a
 * pthread_spin_lock-protected critical section (line B, 1.2 ms = 60%). The lock is busy
 * 2 x 1.2 ms per 2 x 2 ms of thread work, so it is the bottleneck: 1.2 ms an item.
 * One progress visit per item (per thread).
 * Expected at s=60% (scale 0.4): A ~0% (still lock-bound), B ~47% (each thread's 0.8 + 0.48 ms
 * for 2 threads gives 0.64 ms an item, against 1.2 ms). */
#include "common.h"
#include <pthread.h>

static pthread_spinlock_t lock;
static long per_thread, a_iters, b_iters;

static void* worker(void* arg) {
  (void)arg;
  for (long i = 0; i < per_thread; i++) {
    SPIN(a_iters); // @line:A
    pthread_spin_lock(&lock);
    SPIN(b_iters); // @line:B
    pthread_spin_unlock(&lock);
    COZ_PROGRESS_NAMED("item");
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  per_thread = n_items > 0 ? n_items : 400;
  a_iters = ms_iters(0.8, scaleA);
  b_iters = ms_iters(1.2, scaleB);
  if (pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE) != 0) { perror("pthread_spin_init"); return 1; }
  uint64_t t0 = now_ns();
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  pthread_spin_destroy(&lock);
  return 0;
}
