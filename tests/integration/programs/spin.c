/* One thread that runs one line all the time, with a progress point per pass.
   Usage: spin [milliseconds=1200]. */
#include <whatif.h>

#include "itest.h"

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1200) * 1000000ULL;
  uint64_t acc = 1;
  long passes = 0;
  while (itest_now_ns() < deadline) {
    WORK(acc, 200); /* @spin */
    COZ_PROGRESS_NAMED("pass");
    ++passes;
  }
  printf("passes=%ld sink=%llu\n", passes, (unsigned long long)(acc & 1));
  return 0;
}
