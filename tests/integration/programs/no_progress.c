/* Busy work with no progress point at all; built with -g (no_progress) and without (no_debug).
   Usage: no_progress [milliseconds=1000]. */
#include <pthread.h>

#include "itest.h"

static uint64_t g_deadline;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  while (itest_now_ns() < g_deadline) {
    WORK(acc, 100); /* @silent-work */
  }
  return (void*)(uintptr_t)(acc | 1);
}

int main(int argc, char** argv) {
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1000) * 1000000ULL;
  pthread_t threads[2];
  for (long i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, worker, (void*)(i + 1));
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  printf("done\n");
  return 0;
}
