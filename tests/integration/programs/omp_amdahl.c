/* Amdahl with OpenMP: each round the main thread runs a serial line (about 4 ms) while libgomp's
   workers sleep in their pool, then a short parallel region (about 0.5 ms per thread) wakes them.
   libgomp blocks and wakes its threads in inline futex calls, not through pthreads or syscall(3).
   Usage: omp_amdahl [rounds=300]. */
#include <omp.h>
#include <whatif.h>

#include "itest.h"

int main(int argc, char** argv) {
  long rounds = itest_arg(argc, argv, 1, 300);
  uint64_t acc = 1, total = 0;
  for (long i = 0; i < rounds; ++i) {
    WORK(acc, 4000); /* @serial */
#pragma omp parallel num_threads(2) reduction(+ : total)
    {
      uint64_t mine = (uint64_t)omp_get_thread_num() + 1;
      WORK(mine, 500); /* @parallel */
      total += mine;
    }
    COZ_PROGRESS_NAMED("round");
  }
  printf("rounds=%ld sink=%llu\n", rounds, (unsigned long long)((acc ^ total) & 1));
  return 0;
}
