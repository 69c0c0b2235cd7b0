/* Starts thousands of threads that exit at once, while main does the counted work: threads that
   have exited before the profiler sets their breakpoints (-p) must not be reported.
   Usage: short_threads [threads=20000]. Prints the loop count. */
#include <pthread.h>

#include "itest.h"

static void* quick(void* arg) { return arg; }

__attribute__((noinline)) static uint64_t step(uint64_t acc) {
  acc = acc * 2862933555777941757ULL + 3037000493ULL; /* @step */
  __asm__ volatile("" : "+r"(acc));
  return acc;
}

int main(int argc, char** argv) {
  long count = itest_arg(argc, argv, 1, 20000);
  uint64_t acc = 1;
  for (long i = 0; i < count; ++i) {
    pthread_t thread;
    ITEST_CHECK(pthread_create(&thread, NULL, quick, NULL) == 0, "pthread_create");
    pthread_detach(thread);
    WORK(acc, 20);
    acc = step(acc);
  }
  printf("loops=%ld sink=%d\n", count, (int)(acc & 1));
  return 0;
}
