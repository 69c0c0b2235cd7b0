/* Shared helpers for the integration-test programs: a line-attributable work macro, clocks and
   argument parsing. The programs run on their own threads under the runtime; nothing here knows
   about the profiler. Each program checks its own result and exits non-zero when it is wrong. */
#ifndef WHATIF_ITEST_H
#define WHATIF_ITEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* WORK(acc, units): about units microseconds of dependent arithmetic, all on the line that uses it
   (a macro, so a sampler attributes every instruction to that one line). */
#define ITEST_ITERS 900L
#define WORK(acc, units)                                                        \
  do {                                                                          \
    for (long _w = 0; _w < (long)(units) * ITEST_ITERS; ++_w) {                 \
      (acc) = (acc) * 6364136223846793005ULL + 1442695040888963407ULL;          \
      __asm__ volatile("" : "+r"(acc));                                         \
    }                                                                           \
  } while (0)

static inline uint64_t itest_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time (user and system): shares of it hold however loaded the machine is. */
static inline uint64_t itest_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* argv[index] as a number, or `fallback` when absent. */
static inline long itest_arg(int argc, char** argv, int index, long fallback) {
  return index < argc ? strtol(argv[index], NULL, 10) : fallback;
}

#define ITEST_CHECK(condition, ...)                       \
  do {                                                    \
    if (!(condition)) {                                   \
      fprintf(stderr, "check failed: " __VA_ARGS__);      \
      fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);  \
      exit(3);                                            \
    }                                                     \
  } while (0)

#endif
