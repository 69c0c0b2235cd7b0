// Two threads around one mutex, every item timestamped: line A outside the mutex, line B inside it
// (benchmarks/README.md, session 39). Worker threads compute and record; main writes the trace at exit.
// Build: gcc -O2 -g -pthread -I../../../include lock_items.c -o lock_items
// Run:   TRACE=out.txt ./lock_items ITEMS_PER_THREAD A_ITERS B_ITERS   (530000 800000: ~0.55 / 0.8 ms here)
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "whatif.h"

static uint64_t ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// A macro, not a function, so that samples of the loop are on the line that runs it.
#define SPIN(n)                                                                      \
  ({                                                                                 \
    uint64_t x_ = 1;                                                                 \
    for (long i_ = 0; i_ < (n); i_++) {                                              \
      x_ = x_ * 6364136223846793005ull + 1;                                          \
      __asm__ volatile("" : : "r"(x_));                                              \
    }                                                                                \
    x_;                                                                              \
  })

typedef struct {
  uint64_t start, a_cpu, a_end, locked, b_cpu, b_end, unlocked;
} item;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long items, a_iters, b_iters;
static item* trace[2];

static void* worker(void* arg) {
  item* mine = trace[(long)arg];
  for (long i = 0; i < items; i++) {
    item* it = &mine[i];
    it->start = ns(CLOCK_MONOTONIC);
    uint64_t cpu = ns(CLOCK_THREAD_CPUTIME_ID);
    SPIN(a_iters);  // @line:A
    it->a_cpu = ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
    it->a_end = ns(CLOCK_MONOTONIC);
    pthread_mutex_lock(&lock);
    it->locked = ns(CLOCK_MONOTONIC);
    cpu = ns(CLOCK_THREAD_CPUTIME_ID);
    SPIN(b_iters);  // @line:B
    it->b_cpu = ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
    it->b_end = ns(CLOCK_MONOTONIC);
    pthread_mutex_unlock(&lock);
    it->unlocked = ns(CLOCK_MONOTONIC);
    COZ_PROGRESS;
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: TRACE=FILE %s ITEMS_PER_THREAD A_ITERS B_ITERS\n", argv[0]);
    return 2;
  }
  items = atol(argv[1]);
  a_iters = atol(argv[2]);
  b_iters = atol(argv[3]);
  const uint64_t start = ns(CLOCK_MONOTONIC);
  for (int i = 0; i < 2; i++) trace[i] = calloc((size_t)items, sizeof(item));
  pthread_t threads[2];
  for (long i = 0; i < 2; i++) pthread_create(&threads[i], NULL, worker, (void*)i);
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
  const char* path = getenv("TRACE");
  FILE* out = fopen(path != NULL ? path : "/dev/null", "w");
  if (out == NULL) return 1;
  fprintf(out, "start %llu\n", (unsigned long long)start);
  for (int t = 0; t < 2; t++) {
    for (long i = 0; i < items; i++) {
      const item* it = &trace[t][i];
      fprintf(out, "%d %llu %llu %llu %llu %llu %llu %llu\n", t, (unsigned long long)it->start,
              (unsigned long long)it->a_cpu, (unsigned long long)it->a_end, (unsigned long long)it->locked,
              (unsigned long long)it->b_cpu, (unsigned long long)it->b_end, (unsigned long long)it->unlocked);
    }
  }
  fclose(out);
  return 0;
}
