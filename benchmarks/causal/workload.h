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

/* WORK(acc, units): one unit is WORK_ITERS dependent LCG steps (about 1 microsecond here); units may
   be fractional (the harness scales them by 1 - s), and the steps are rounded down only after the
   multiplication (before, 2.5 units ran 2000 steps: mix_fine's A at s = 0.5 took 60% off the line).
   It is a macro, not a function, so every instruction it expands to carries the source line of its
   use: a profiler sampling it attributes the time to that one line, which is what the known answers
   are about. The empty asm keeps GCC from collapsing the loop. */
#define WORK_ITERS 1000L
#define WORK(acc, units) do { for (long _w_i = 0; _w_i < (long)((units) * WORK_ITERS); ++_w_i) { (acc) = (acc) * 6364136223846793005ULL + 1442695040888963407ULL; __asm__ volatile("" : "+r"(acc)); } } while (0)

/* Other kinds of work, so that a profiler tuned to one instruction mix does not pass by accident.
   Each is a macro for the same reason as WORK: its instructions carry the line of its use. Their
   unit costs are calibrated to roughly 1 microsecond, but no answer depends on that: the harness
   measures the real effect of scaling the parameter.

   FLOPS(x, units): a dependent chain of double multiply-adds and square roots (FP latency bound). */
#define FLOPS_ITERS 150L
#define FLOPS(x, units) do { for (long _f_i = 0; _f_i < (long)((units) * FLOPS_ITERS); ++_f_i) { (x) = __builtin_sqrt((x) * 1.0000001 + 0.5); __asm__ volatile("" : "+x"(x)); } } while (0)

/* WALK(idx, units): a dependent pointer chase through wl_ring, a random cyclic permutation of
   cache lines over WL_RING_BYTES (half this machine's L2): load latency bound, little arithmetic.
   Call wl_ring_init() once before use. */
#define WL_RING_BYTES (256u * 1024u)
#define WL_RING_STRIDE 16u /* uint32_t per 64-byte line */
#define WALK_ITERS 300L /* about 1.2 us warm in L2, like WORK's and FLOPS' units (150 gave 0.6 us) */
static uint32_t* wl_ring __attribute__((unused));
#define WALK(idx, units) do { for (long _k_i = 0; _k_i < (long)((units) * WALK_ITERS); ++_k_i) { (idx) = wl_ring[(idx)]; } } while (0)

static inline void wl_ring_init(void) {
  const uint32_t lines = WL_RING_BYTES / 64u;
  wl_ring = (uint32_t*)calloc(lines, 64u);
  uint32_t* order = (uint32_t*)malloc(lines * sizeof(uint32_t));
  if (!wl_ring || !order) exit(3);
  for (uint32_t i = 0; i < lines; ++i) order[i] = i;
  uint64_t r = 88172645463325252ULL; /* Sattolo's shuffle: one cycle through every line */
  for (uint32_t i = lines - 1; i > 0; --i) {
    r ^= r << 13; r ^= r >> 7; r ^= r << 17;
    uint32_t j = (uint32_t)(r % i);
    uint32_t t = order[i]; order[i] = order[j]; order[j] = t;
  }
  for (uint32_t i = 0; i < lines; ++i) wl_ring[order[i] * WL_RING_STRIDE] = order[(i + 1) % lines] * WL_RING_STRIDE;
  free(order);
}

/* Library-call work: `units` calls of fn on a buffer, where a fractional unit is one call on that
   fraction of the buffer, so the time scales with the parameter exactly as WORK's does. The calls
   are written out at the use site (no helper function) so the call instructions carry its line. */
#define LIBCALLS(units, call_full, call_part) do { const double _l_u = (units); const long _l_n = (long)_l_u; for (long _l_i = 0; _l_i < _l_n; ++_l_i) { call_full; } const double _l_frac = _l_u - (double)_l_n; if (_l_frac > 0) { call_part; } } while (0)

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
