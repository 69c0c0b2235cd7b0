// Known work for the counters' tests: each worker thread spins for a set CPU time in work_a, and the
// main thread recurses (recurse) and spins in work_b. Built plain, with -finstrument-functions and
// with -fpatchable-function-entry. Args: threads, ms of CPU per worker, recursion depth.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static double thread_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

volatile unsigned long sink;

__attribute__((noinline)) void spin_for(double ms) {
  double until = thread_cpu_ms() + ms;
  unsigned long x = 0;
  while (thread_cpu_ms() < until) {
    for (int i = 0; i < 1000; ++i) x += i * x + 1;
  }
  sink = x;
}

__attribute__((noinline)) void work_a(double ms) { spin_for(ms); }
__attribute__((noinline)) void work_b(double ms) { spin_for(ms); }

/// Each level spins `ms` itself, then calls the next level: inclusive = depth * ms at the top.
__attribute__((noinline)) void recurse(int depth, double ms) {
  spin_for(ms);
  if (depth > 1) recurse(depth - 1, ms);
  sink += depth;
}

static double g_ms = 50;
static int g_calls = 4;

static void* worker(void* arg) {
  char name[16];
  snprintf(name, sizeof name, "worker-%ld", (long)(size_t)arg);
  prctl(PR_SET_NAME, name);
  for (int i = 0; i < g_calls; ++i) work_a(g_ms / g_calls);
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  g_ms = argc > 2 ? atof(argv[2]) : 50;
  int depth = argc > 3 ? atoi(argv[3]) : 4;
  pthread_t ids[64];
  if (threads > 64) threads = 64;
  for (int i = 0; i < threads; ++i) pthread_create(&ids[i], NULL, worker, (void*)(size_t)(i + 1));
  for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
  recurse(depth, g_ms / depth / 2);
  work_b(g_ms / 2);
  printf("done\n");
  return 0;
}
