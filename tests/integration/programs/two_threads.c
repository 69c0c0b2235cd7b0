/* The Coz paper's figure 1: each round, thread A runs fa and thread B runs fb in parallel; main
   joins both and records one progress visit. fb is a little longer, so it is the critical path.
   Usage: two_threads [milliseconds=1500] [exit_status=0]. Prints the number of rounds. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

static void* fa(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  WORK(acc, 2000); /* @fa */
  return (void*)(uintptr_t)acc;
}

static void* fb(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  WORK(acc, 2500); /* @fb */
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  long rounds = 0;
  uint64_t sink = 0;
  while (itest_now_ns() < deadline) {
    pthread_t a, b;
    void *ra, *rb;
    ITEST_CHECK(pthread_create(&a, NULL, fa, (void*)(uintptr_t)rounds) == 0, "create a");
    ITEST_CHECK(pthread_create(&b, NULL, fb, (void*)(uintptr_t)(rounds + 1)) == 0, "create b");
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    sink += (uint64_t)(uintptr_t)ra ^ (uint64_t)(uintptr_t)rb;
    COZ_PROGRESS_NAMED("round"); /* @progress */
    ++rounds;
  }
  printf("rounds=%ld sink=%llu\n", rounds, (unsigned long long)(sink & 1));
  return rounds > 0 ? (int)itest_arg(argc, argv, 2, 0) : 3;
}
