/* Shape 14 (session 15): two threads handing items over through flags they spin on without
 * pause (`while (flag < i) ;`, as naive code waits): the producer computes A (1 ms), the consumer
 * B (0.6 ms) and counts a progress visit. Producer-bound: A gains, B nothing. */
#include "common.h"
#include <pthread.h>
#include <stdatomic.h>
static atomic_long produced, consumed;
static long n, a_iters, b_iters;
static void* consumer(void* arg) {
  (void)arg;
  for (long i = 1; i <= n; i++) {
    while (atomic_load_explicit(&produced, memory_order_acquire) < i) ;
    atomic_store_explicit(&consumed, i, memory_order_release);
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  return NULL;
}
int main(int argc, char** argv) {
  parse_args(argc, argv);
  n = n_items > 0 ? n_items : 800;
  a_iters = ms_iters(1.0, scaleA);
  b_iters = ms_iters(0.6, scaleB);
  uint64_t t0 = now_ns();
  pthread_t t;
  pthread_create(&t, NULL, consumer, NULL);
  for (long i = 1; i <= n; i++) {
    SPIN(a_iters); // @line:A
    while (atomic_load_explicit(&consumed, memory_order_acquire) < i - 1) ;
    atomic_store_explicit(&produced, i, memory_order_release);
  }
  pthread_join(t, NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
