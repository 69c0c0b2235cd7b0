/* indep: two threads that never interact. The main thread does 1 ms of line B and 1 ms of other
 * work per item and visits progress point `item`; a helper thread spins 0.5-ms rounds of line A
 * until main is done. Speeding A changes nothing (~0%); B ~30% at s=60%. A virtual speedup of A
 * pauses main at each of the helper's samples, ~0.6 ms a millisecond: whatever a pause costs main
 * beyond the delay it pays shows up as a negative prediction for A (session 45). */
#include "common.h"
#include <pthread.h>
#include <stdatomic.h>

static atomic_int done;
static long a_iters;

static void* helper(void* arg) {
  (void)arg;
  while (!atomic_load_explicit(&done, memory_order_relaxed)) {
    SPIN(a_iters); // @line:A
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 500;
  a_iters = ms_iters(0.5, scaleA);
  const long b_iters = ms_iters(1.0, scaleB), other_iters = ms_iters(1.0, 1.0);
  pthread_t t;
  pthread_create(&t, NULL, helper, NULL);
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    SPIN(b_iters); // @line:B
    SPIN(other_iters);
    COZ_PROGRESS_NAMED("item");
  }
  uint64_t elapsed = now_ns() - t0;
  atomic_store(&done, 1);
  pthread_join(t, NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)elapsed);
  return 0;
}
