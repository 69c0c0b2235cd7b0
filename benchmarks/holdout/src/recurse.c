/* Shape: single thread, line A inside a recursive function. Per item, walk() recurses over a
 * complete binary tree of depth DEPTH (12: 4096 leaves, 8191 calls of the noinline recursive
 * function) and does the leaf work on line A (an LCG chain of LEAF_ITERS x scaleA steps seeded
 * by the leaf's index and the previous leaf's result, ~1 ms for all leaves at scale 1); line B is
 * a plain arithmetic loop (~1 ms) in main. One progress visit per item.
 * Expected at s=60%: A ~30%, B ~30% (a little less for both: the ~0.1 ms of call overhead of the
 * recursion itself is on neither line). */
#include "common.h"

#define DEPTH 12
#ifndef LEAF_ITERS
#define LEAF_ITERS 244 /* 4096 leaves x 244 ~ 1.0 M LCG steps: measured equal to line B's SPIN(1 ms) */
#endif

static long leaf_iters;
/* The previous leaf's result, which seeds the next leaf's chain: with independent seeds the CPU ran
 * the end of one leaf's chain beside the start of the next, so the leaf loop cost 1.16 ns an
 * iteration at 244 iterations and 0.79 ns at 98, and scaleA=0.4 saved 73% of line A's time instead
 * of 60% (a truth above what the line's share allows). Chained, its cost is linear in scaleA. */
static uint64_t last_leaf;

static __attribute__((noinline)) uint64_t walk(int depth, uint64_t node) {
  if (depth == 0) { uint64_t x = node ^ last_leaf; for (long i = 0; i < leaf_iters; i++) { x = x * 6364136223846793005ull + 1442695040888963407ull; __asm__ volatile("" : "+r"(x)); } last_leaf = x; return x; } // @line:A
  uint64_t left = walk(depth - 1, 2 * node + 1);
  uint64_t right = walk(depth - 1, 2 * node + 2);
  return (left ^ (right >> 1)) + node;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 500;
  leaf_iters = (long)(LEAF_ITERS * scaleA + 0.5);
  const long b_iters = ms_iters(1.0, scaleB);
  uint64_t check = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    check += walk(DEPTH, (uint64_t)i);
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("check=%llu\n", (unsigned long long)check);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
