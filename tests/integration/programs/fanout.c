/* A fan-out of short-lived threads: per round, twice as many threads as the process may use CPUs
   each compute one line for about a millisecond of CPU time and exit; the main thread joins them
   and visits a progress point. Every thread is born and dies within a few milliseconds, too soon to
   measure its own wait for a CPU. CPU bound: speeding the line by s shortens the run by about s.
   Usage: fanout [rounds=600] [threads=2 x CPUs]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <whatif.h>

#include "itest.h"

static atomic_ullong task_cpu_ns; /* the tasks' CPU time, printed at the end */
static atomic_ullong line_cpu_ns; /* the part of it in the work line */

static unsigned long long thread_cpu_ns(void) {
  struct timespec cpu;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  return (unsigned long long)cpu.tv_sec * 1000000000ull + (unsigned long long)cpu.tv_nsec;
}

static void* task(void* seed) {
  uint64_t acc = (uint64_t)(uintptr_t)seed;
  unsigned long long before = thread_cpu_ns();
  WORK(acc, 800); /* @fanout-work */
  unsigned long long after = thread_cpu_ns();
  atomic_fetch_add(&line_cpu_ns, after - before);
  atomic_fetch_add(&task_cpu_ns, after);
  return (void*)(uintptr_t)(acc & 1);
}

int main(int argc, char** argv) {
  cpu_set_t cpus;
  long usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  long rounds = itest_arg(argc, argv, 1, 600);
  int threads = (int)itest_arg(argc, argv, 2, 2 * usable);
  ITEST_CHECK(threads > 0 && threads <= 256, "usage: fanout [rounds] [threads<=256]");
  uint64_t sink = 0;
  for (long r = 0; r < rounds; ++r) {
    pthread_t ids[256];
    for (int i = 0; i < threads; ++i) {
      ITEST_CHECK(pthread_create(&ids[i], NULL, task, (void*)(uintptr_t)(r + i)) == 0, "pthread_create");
    }
    for (int i = 0; i < threads; ++i) {
      void* result;
      pthread_join(ids[i], &result);
      sink += (uint64_t)(uintptr_t)result;
    }
    COZ_PROGRESS_NAMED("item");
  }
  printf("fanout ok: %ld rounds of %d threads (%llu), task_cpu_ms=%llu line_cpu_ms=%llu\n", rounds, threads,
         (unsigned long long)(sink & 1), (unsigned long long)(atomic_load(&task_cpu_ns) / 1000000ull),
         (unsigned long long)(atomic_load(&line_cpu_ns) / 1000000ull));
  return 0;
}
