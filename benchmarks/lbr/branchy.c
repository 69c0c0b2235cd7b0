/* Branchy workloads for the software branch tracer's benchmarks (fidelity against callgrind's
   exact jump counts, overhead): insertion sort on random data, binary searches, a switch-dispatched
   bytecode interpreter and Collatz sequences. Usage: branchy MODE ROUNDS. Prints a checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_seed = 88172645463325252ull;
static uint64_t next_random(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed;
}

__attribute__((noinline)) static uint64_t sort_round(void) {
  int data[600];
  for (int i = 0; i < 600; ++i) data[i] = (int)(next_random() % 10000);
  for (int i = 1; i < 600; ++i) {
    int value = data[i], j = i - 1;
    while (j >= 0 && data[j] > value) {
      data[j + 1] = data[j];
      --j;
    }
    data[j + 1] = value;
  }
  return (uint64_t)data[300];
}

__attribute__((noinline)) static uint64_t search_round(void) {
  static int table[4096];
  static int ready;
  if (!ready) {
    for (int i = 0; i < 4096; ++i) table[i] = i * 3;
    ready = 1;
  }
  uint64_t found = 0;
  for (int k = 0; k < 2000; ++k) {
    int key = (int)(next_random() % 12288), low = 0, high = 4095;
    while (low <= high) {
      int middle = (low + high) / 2;
      if (table[middle] == key) {
        ++found;
        break;
      }
      if (table[middle] < key) low = middle + 1;
      else high = middle - 1;
    }
  }
  return found;
}

__attribute__((noinline)) static uint64_t interp_round(void) {
  static const unsigned char program[] = {0, 1, 2, 3, 1, 4, 2, 0, 5, 3, 1, 2, 6};
  int64_t accumulator = 1, counter = 0;
  for (int step = 0; step < 20000; ++step) {
    switch (program[step % sizeof(program)]) {
      case 0: accumulator += 7; break;
      case 1: accumulator *= 3; break;
      case 2: accumulator ^= accumulator >> 3; break;
      case 3: accumulator -= counter; break;
      case 4: counter += accumulator & 15; break;
      case 5: accumulator = accumulator % 100003; break;
      default: counter ^= 0x55; break;
    }
  }
  return (uint64_t)(accumulator + counter);
}

__attribute__((noinline)) static uint64_t collatz_round(void) {
  uint64_t total = 0;
  for (uint64_t n = 1; n < 3000; ++n) {
    uint64_t x = n;
    while (x != 1) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++total;
    }
  }
  return total;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "sort";
  long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
  uint64_t (*round)(void) = strcmp(mode, "sort") == 0     ? sort_round
                            : strcmp(mode, "search") == 0 ? search_round
                            : strcmp(mode, "interp") == 0 ? interp_round
                                                          : collatz_round;
  uint64_t checksum = 0;
  for (long i = 0; i < rounds; ++i) checksum += round();
  printf("%s %llu\n", mode, (unsigned long long)checksum);
  return 0;
}
