// Gregg's three CPI shapes (AMD64 PICs): a register-bound loop, a loop over a cache-resident array
// and a pointer chase through an array far larger than the caches. He measured CPI of about 0.34,
// 1.1 and 8.5. Usage: cpi_loops register|cache|memory SECONDS. Single-threaded.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

volatile uint64_t sink;

int main(int argc, char** argv) {
  const char* shape = argc > 1 ? argv[1] : "register";
  double seconds = argc > 2 ? atof(argv[2]) : 1;
  double until = now() + seconds;
  uint64_t total = 0;
  if (strcmp(shape, "register") == 0) {
    uint64_t a = 1, b = 2, c = 3, d = 4;
    while (now() < until) {
      for (int i = 0; i < 1000000; ++i) {  // four independent chains: several instructions per cycle
        a += i; b ^= a; c += 3; d ^= c;
      }
    }
    total = a + b + c + d;
  } else if (strcmp(shape, "cache") == 0) {
    enum { kWords = 4096 };  // 32 KiB: fits the L1/L2 caches
    static uint64_t array[kWords];
    for (int i = 0; i < kWords; ++i) array[i] = (uint64_t)(i * 7 + 1) % kWords;
    uint64_t index = 0;
    while (now() < until) {
      for (int i = 0; i < 1000000; ++i) index = array[index] + (uint64_t)i % 3, index %= kWords;
    }
    total = index;
  } else if (strcmp(shape, "memory") == 0) {
    size_t words = (size_t)256 << 20 >> 3;  // 256 MiB: far past the last-level cache
    uint64_t* array = malloc(words * sizeof(uint64_t));
    if (array == NULL) return 1;
    // One random cycle through all words (Sattolo's shuffle): every load misses.
    for (size_t i = 0; i < words; ++i) array[i] = i;
    uint64_t state = 88172645463325252ull;
    for (size_t i = words - 1; i > 0; --i) {
      state ^= state << 13; state ^= state >> 7; state ^= state << 17;
      size_t j = state % i;
      uint64_t t = array[i]; array[i] = array[j]; array[j] = t;
    }
    uint64_t index = 0;
    while (now() < until) {
      for (int i = 0; i < 100000; ++i) index = array[index];
    }
    total = index;
    free(array);
  } else {
    fprintf(stderr, "usage: cpi_loops register|cache|memory SECONDS\n");
    return 2;
  }
  sink = total;
  return 0;
}
