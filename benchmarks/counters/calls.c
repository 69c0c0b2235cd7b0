// Call-heavy workload for --counters' overhead (ScALPEL's vanilla / all / selective): main calls
// outer ROUNDS times; outer calls middle 100 times; middle calls leaf 100 times (tiny arithmetic).
// Usage: calls [ROUNDS]; prints a checksum so the calls are not optimised away.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned leaf(unsigned x) { return x * 2654435761u + 1; }

__attribute__((noinline)) unsigned middle(unsigned x) {
  for (int i = 0; i < 100; ++i) x = leaf(x);
  return x;
}

__attribute__((noinline)) unsigned outer(unsigned x) {
  for (int i = 0; i < 100; ++i) x = middle(x);
  return x;
}

int main(int argc, char** argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 100;
  unsigned x = 1;
  for (long r = 0; r < rounds; ++r) x = outer(x);
  printf("checksum %u\n", x);
  return 0;
}
