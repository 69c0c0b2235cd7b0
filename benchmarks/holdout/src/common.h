/* Shared helpers for the holdout known-answer programs. */
#ifndef HOLDOUT_COMMON_H
#define HOLDOUT_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "whatif.h" /* the repository's include/ (Makefile): COZ_PROGRESS_NAMED */

/* About 1 ns per iteration on this machine: 1,000,000 iterations ~ 1 ms. */
#define ITERS_PER_MS 1000000.0

static double scaleA = 1.0, scaleB = 1.0;
static long n_items = -1; /* -1: program default */

static void parse_args(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "scaleA=", 7) == 0) scaleA = atof(argv[i] + 7);
    else if (strncmp(argv[i], "scaleB=", 7) == 0) scaleB = atof(argv[i] + 7);
    else if (strncmp(argv[i], "n=", 2) == 0) n_items = atol(argv[i] + 2);
    else { fprintf(stderr, "unknown argument %s (use scaleA=X scaleB=X n=N)\n", argv[i]); exit(2); }
  }
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static long ms_iters(double ms, double scale) { return (long)(ms * scale * ITERS_PER_MS); }

/* Non-optimizable dependent LCG chain; the whole expansion is attributed to the line that invokes it. */
#define SPIN(iters) do { uint64_t _x = 0x9e3779b97f4a7c15ull; long _n = (long)(iters); for (long _i = 0; _i < _n; _i++) { _x = _x * 6364136223846793005ull + 1442695040888963407ull; __asm__ volatile("" : "+r"(_x)); } __asm__ volatile("" : : "r"(_x)); } while (0)

#endif
