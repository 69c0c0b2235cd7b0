/* One thread; per round, one line maps fresh anonymous memory and touches every page of it (each
   first touch is a page fault: the kernel allocates and clears a page) for about 55% of the
   thread's CPU time, and the next line is a plain loop for the rest. Kernel-mode samples taken in
   those faults must go to the touching line. Usage: fault_line [milliseconds=1500]. */
#include <sys/mman.h>
#include <whatif.h>

#include "itest.h"

#define REGION_PAGES 256
#define TOUCH_NS 1100000ULL /* per round: 55% in the touching line */
#define LOOP_NS 900000ULL   /* 45% in the loop line */

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  const size_t bytes = (size_t)REGION_PAGES * 4096;
  uint64_t acc = 1;
  long rounds = 0, faults = 0;
  while (itest_now_ns() < deadline) {
    uint64_t start = itest_thread_cpu_ns();
    do { volatile char* p = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); if (p == MAP_FAILED) return 1; madvise((void*)p, bytes, MADV_NOHUGEPAGE); for (size_t i = 0; i < bytes; i += 4096, ++faults) p[i] = 1; munmap((void*)p, bytes); } while (itest_thread_cpu_ns() - start < TOUCH_NS); /* @touch */
    start = itest_thread_cpu_ns();
    do WORK(acc, 40); while (itest_thread_cpu_ns() - start < LOOP_NS); /* @loop */
    COZ_PROGRESS_NAMED("round");
    ++rounds;
  }
  printf("rounds=%ld faults=%ld sink=%llu\n", rounds, faults, (unsigned long long)(acc & 1));
  return 0;
}
