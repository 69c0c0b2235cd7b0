/* A hot line for -p: two threads each run `hot` a known number of times (after pauses, so the
   experiment is running and a breakpoint counter is open in each thread), then print how often and a checksum that a wrongly moved
   instruction would change. Usage: patch_point [visits per thread=2000000]. */
#include <pthread.h>

#include "itest.h"

static long g_per_thread;

__attribute__((noinline)) static uint64_t hot(uint64_t acc, uint64_t i) {
  acc = (acc ^ (i << 7)) * 2862933555777941757ULL + 3037000493ULL; /* @hot */
  if (acc & 1) acc += i;
  return acc;
}

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  struct timespec pause = {0, 100000000};  /* time for the profiler to see the thread (breakpoints) */
  nanosleep(&pause, NULL);
  for (long i = 0; i < g_per_thread; ++i) acc = hot(acc, (uint64_t)i);
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_per_thread = itest_arg(argc, argv, 1, 2000000);
  struct timespec pause = {0, 200000000};
  nanosleep(&pause, NULL);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, worker, (void*)(uintptr_t)(i + 1));
  uint64_t checksum = 0;
  for (int i = 0; i < 2; ++i) {
    void* result = NULL;
    pthread_join(threads[i], &result);
    checksum ^= (uint64_t)(uintptr_t)result;
  }
  printf("visits=%ld checksum=%llx\n", 2 * g_per_thread, (unsigned long long)checksum);
  return 0;
}
