/* The main thread starts two workers and leaves with pthread_exit; the workers compute and count
   progress, then return. glibc ends such a process, with status 0, when its last thread exits.
   Usage: main_exits [items=600]. Prints "worker done" twice. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

static long g_items;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    WORK(acc, 1000); /* @worker-work */
    COZ_PROGRESS_NAMED("item");
  }
  printf("worker done %llu\n", (unsigned long long)(acc & 1));
  fflush(stdout);
  return NULL;
}

int main(int argc, char** argv) {
  g_items = itest_arg(argc, argv, 1, 600);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) ITEST_CHECK(pthread_create(&threads[i], NULL, worker, (void*)(uintptr_t)(i + 1)) == 0, "create");
  pthread_exit(NULL);
}
