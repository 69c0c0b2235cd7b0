/* Starts thousands of threads that exit at once, while main does the counted work: threads that
   have exited before the profiler sets their breakpoints (-p) must not be reported.
   Usage: short_threads [threads=20000]. Prints the loop count.
   The threads start detached: pthread_detach() after pthread_create() races with a thread that has
   already exited (glibc 2.36 reads the freed descriptor), a crash that pauses in main make likely. */
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
  pthread_attr_t detached;
  pthread_attr_init(&detached);
  pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
  for (long i = 0; i < count; ++i) {
    pthread_t thread;
    ITEST_CHECK(pthread_create(&thread, &detached, quick, NULL) == 0, "pthread_create");
    WORK(acc, 20);
    acc = step(acc);
  }
  pthread_attr_destroy(&detached);
  printf("loops=%ld sink=%d\n", count, (int)(acc & 1));
  return 0;
}
