/* Culprit-validation micro-benchmarks for the stall analysis (benchmarks/stalls/run.sh): each kernel
   has one known cause. Usage: micro chase|divide|branch|icache SECONDS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct node { struct node* next; long pad[7]; };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* D-cache: a random cycle through 64 MB, one dependent load per step. */
__attribute__((noinline)) struct node* chase(struct node* p, long n) {
  for (long i = 0; i < n; ++i) p = p->next;
  return p;
}

/* Divider: each divide waits for the previous one. */
__attribute__((noinline)) uint64_t divide(uint64_t x, uint64_t d, long n) {
  for (long i = 0; i < n; ++i) x = x / d + 0x9E3779B97F4A7C15ull;
  return x;
}

/* Mispredict: a branch on random bits. */
__attribute__((noinline)) long branch(const unsigned char* data, long n) {
  long a = 0, b = 0;
  for (long i = 0; i < n; ++i) {
    if (data[i] & 1) {
      a += 3;
      __asm__ volatile("" : "+r"(a));
    } else {
      b ^= 7;
      __asm__ volatile("" : "+r"(b));
    }
  }
  return a + b;
}

/* A reduction with a data-dependent step, for the frequency-accuracy run (accuracy.sh). */
__attribute__((noinline)) long sum_skip(const unsigned char* data, long n) {
  long s = 0;
  for (long i = 0; i < n; i += 1 + (data[i] & 3)) s += data[i] * (i & 7);
  return s;
}

/* I-cache: straight-line code far larger than a 32 KB I-cache (icache_body.h: generated). */
#include "icache_body.h"

int main(int argc, char** argv) {
  const char* kind = argc > 1 ? argv[1] : "chase";
  if (!strcmp(kind, "mix")) {
    /* Fixed work (not time): the same executions under whatif and under callgrind. */
    long rounds = argc > 2 ? atol(argv[2]) : 100;
    long n = 1 << 16;
    unsigned char* data = malloc(n);
    srand(2);
    for (long i = 0; i < n; ++i) data[i] = rand();
    long count = (1 << 20) / sizeof(struct node);
    struct node* nodes = malloc(count * sizeof(struct node));
    for (long i = 0; i < count; ++i) nodes[i].next = &nodes[(i * 7919 + 1) % count];
    struct node* p = nodes;
    uint64_t x = 12345, sink = 0;
    for (long r = 0; r < rounds; ++r) {
      sink += branch(data, n);
      x = divide(x, 3, 1 << 13);
      p = chase(p, 1 << 15);
      sink += sum_skip(data, n);
    }
    printf("sink %llu\n", (unsigned long long)(sink + x + (uintptr_t)p));
    return 0;
  }
  double seconds = argc > 2 ? atof(argv[2]) : 2;
  double end = now() + seconds;
  uint64_t sink = 0;
  if (!strcmp(kind, "chase")) {
    long count = (64 << 20) / sizeof(struct node);
    struct node* nodes = malloc(count * sizeof(struct node));
    long* order = malloc(count * sizeof(long));
    for (long i = 0; i < count; ++i) order[i] = i;
    srand(1);
    for (long i = count - 1; i > 0; --i) {
      long j = ((long)rand() << 16 ^ rand()) % (i + 1), t = order[i];
      order[i] = order[j], order[j] = t;
    }
    for (long i = 0; i < count; ++i) nodes[order[i]].next = &nodes[order[(i + 1) % count]];
    struct node* p = nodes;
    while (now() < end) p = chase(p, 1 << 20);
    sink = (uintptr_t)p;
  } else if (!strcmp(kind, "divide")) {
    uint64_t x = 12345;
    while (now() < end) x = divide(x, 3, 1 << 20);
    sink = x;
  } else if (!strcmp(kind, "branch")) {
    long n = 1 << 20;
    unsigned char* data = malloc(n);
    srand(2);
    for (long i = 0; i < n; ++i) data[i] = rand();
    while (now() < end) sink += branch(data, n);
  } else {
    uint64_t x = 1;
    while (now() < end) x = icache(x);
    sink = x;
  }
  printf("sink %llu\n", (unsigned long long)sink);
  return 0;
}
