/* A C loop with a branch of known bias, for AutoFDO's tools (whatif export --autofdo, create_gcov,
   gcc -fauto-profile): built with -gdwarf-4, which Debian's create_gcov (autofdo 0.19) reads.
   Usage: afdo_work MILLISECONDS. Prints "ok" and a checksum. */
#include "itest.h"

__attribute__((noinline)) long afdo_classify(long n) {
  long x = 0;
  for (long i = n; i > 0; --i) {
    if (i & 3) {
      x ^= i * 7;
      __asm__ volatile("" ::: "memory"); /* a real branch, not a conditional move */
    } else {
      x += 3;
    }
  }
  return x;
}

int main(int argc, char** argv) {
  uint64_t end = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 300) * 1000000ULL;
  long sum = 0;
  while (itest_now_ns() < end) sum += afdo_classify(4000);
  printf("ok %ld\n", sum);
  return 0;
}
