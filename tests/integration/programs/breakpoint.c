/* No source progress points: the test counts visits to one line with a hardware breakpoint
   (`-p breakpoint.c:LINE`). Usage: breakpoint [milliseconds=1200]. Prints the visit count. */
#include <pthread.h>

#include "itest.h"

__attribute__((noinline)) static uint64_t visit(uint64_t acc) {
  acc = acc * 2862933555777941757ULL + 3037000493ULL; /* @visit */
  __asm__ volatile("" : "+r"(acc));
  return acc;
}

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1200) * 1000000ULL;
  uint64_t acc = 1;
  long visits = 0;
  while (itest_now_ns() < deadline) {
    WORK(acc, 100); /* @bp-work */
    acc = visit(acc);
    ++visits;
  }
  printf("visits=%ld sink=%d\n", visits, (int)(acc & 1));
  return 0;
}
