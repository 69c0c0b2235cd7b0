// Thread churn: the cost of one pthread_create + pthread_join of an empty thread, natively and under
// whatif (each new thread registers with the runtime and opens its sampling events). Main thread only.
// Build: gcc -O2 -pthread thread_churn.c -o thread_churn; run: ./thread_churn [THREADS]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void* empty(void* argument) { return argument; }

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2000;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < threads; i++) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, empty, NULL) != 0) return 1;
    pthread_join(thread, NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
  printf("per thread %.1f us\n", ns / threads / 1e3);
  return 0;
}
