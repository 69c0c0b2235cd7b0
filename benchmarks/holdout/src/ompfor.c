/* ompfor: OpenMP fork-join. Each round the master does a serial part (A, 1.5 ms), then a
 * `#pragma omp parallel for` runs 4 chunks of B work (0.75 ms each, ~1.5 ms on 2 CPUs).
 * Round ~3 ms. Expected at s=60%: A ~30% (0.9 of 3 ms), B ~30% (4 x 0.45 ms / 2 CPUs). */
#include "common.h"
#include <omp.h>

#define CHUNKS 4

static void serial_part(void) {
  SPIN(ms_iters(1.5, scaleA)); // @line:A
}

static void chunk_work(void) {
  SPIN(ms_iters(0.75, scaleB)); // @line:B
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  long rounds = n_items > 0 ? n_items : 330;
  uint64_t t0 = now_ns();
  for (long r = 0; r < rounds; r++) {
    serial_part();
#pragma omp parallel for schedule(static)
    for (int c = 0; c < CHUNKS; c++) chunk_work();
    COZ_PROGRESS_NAMED("item");
  }
  printf("threads=%d rounds=%ld\n", omp_get_max_threads(), rounds);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
