/* Shared helpers for the known-answer workloads: argument parsing, the one-line work macro, timing.
   Everything here runs on the workloads' own threads; nothing is profiler-specific. */
#ifndef WHATIF_BENCH_WORKLOAD_H
#define WHATIF_BENCH_WORKLOAD_H

#include <coz.h> /* COZ_PROGRESS_NAMED, COZ_BEGIN, COZ_END: whatif's include/whatif.h is ABI-identical */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* WORK(acc, units): one unit is WORK_ITERS dependent LCG steps (about 1 microsecond here).
   It is a macro, not a function, so every instruction it expands to carries the source line of its
   use: a profiler sampling it attributes the time to that one line, which is what the known answers
   are about. The empty asm keeps GCC from collapsing the loop. */
#define WORK_ITERS 1000L
#define WORK(acc, units) do { for (long _w_i = 0; _w_i < (long)(units) * WORK_ITERS; ++_w_i) { (acc) = (acc) * 6364136223846793005ULL + 1442695040888963407ULL; __asm__ volatile("" : "+r"(acc)); } } while (0)

/* Parameters are key=value arguments; a missing key takes its default. Values are doubles so a
   work amount can be scaled by (1 - s) exactly as the harness asks. */
static inline double wl_arg(int argc, char** argv, const char* key, double dflt) {
  size_t n = strlen(key);
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=') {
      char* end = NULL;
      double v = strtod(argv[i] + n + 1, &end);
      if (end == argv[i] + n + 1 || *end != '\0') {
        fprintf(stderr, "bad value for %s: '%s' (expected a number)\n", key, argv[i] + n + 1);
        exit(2);
      }
      return v;
    }
  }
  return dflt;
}

static inline uint64_t wl_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Relative sleep (never absolute): a virtual speedup delays the sleeping thread after it wakes, so
   relative pacing stretches with the inserted delays exactly as the rest of the program does. */
static inline void wl_sleep_us(double us) {
  if (us <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)(us / 1e6);
  ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* The one line the harness parses: elapsed time of the measured region, progress visits, and for
   latency workloads the mean latency the program measured itself. */
static inline void wl_report(uint64_t elapsed_ns, uint64_t progress, double mean_latency_ns, uint64_t sink) {
  printf("RESULT elapsed_ns=%" PRIu64 " progress=%" PRIu64 " mean_latency_ns=%.0f sink=%" PRIu64 "\n",
         elapsed_ns, progress, mean_latency_ns, sink & 1);
  fflush(stdout);
}

#endif
