// Shape: parallel divide-and-conquer with std::async (a merge sort's skeleton). One item = one
// whole "sort": a recursion of depth 2, where each inner call hands its left half to
// std::async(std::launch::async, ...) (a fresh thread each time in libstdc++), does its right half
// itself, waits on the future (futex wait inside std::future::get), then merges. 4 leaves of
// 0.5 ms (line A) and 3 merges of 0.3 ms (line B, two at depth 1, one at the root): 4 threads
// (main + 3 async) on 2 CPUs, 3 thread creations and joins an item.
// Ideal scheduling: 4 x 0.5 ms of leaves on 2 CPUs (1.0) + the two depth-1 merges in parallel (0.3)
// + the root merge (0.3) = 1.6 ms an item (fair sharing gives the same: the leaves all finish at
// 1.0). At s=60%: A 0.5 -> 0.2: 0.4 + 0.6 = 1.0 (~37%); B 0.3 -> 0.12: 1.0 + 0.24 = 1.24 (~22%).
// Natively expect ~2.3 ms an item (SPIN's ms are ~1.35 real ms, plus ~0.1 ms of spawning and joining).
#include "common.h"
#include <future>

static long a_iters, b_iters;
static const int kDepth = 2;  // 2 levels of splitting -> 4 leaves

static long sort_range(long lo, long hi, int depth) {
  if (depth == kDepth) {
    SPIN(a_iters); // @line:A
    return hi - lo;
  }
  const long mid = lo + (hi - lo) / 2;
  std::future<long> left = std::async(std::launch::async, sort_range, lo, mid, depth + 1);
  const long right = sort_range(mid, hi, depth + 1);
  const long total = left.get() + right;
  SPIN(b_iters); // @line:B
  return total;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 720;
  a_iters = ms_iters(0.5, scaleA);
  b_iters = ms_iters(0.3, scaleB);
  uint64_t t0 = now_ns();
  long sum = 0;
  for (long i = 0; i < n; i++) {
    sum += sort_range(0, 1024, 0);
    COZ_PROGRESS_NAMED("item");
  }
  if (sum != 1024 * n) { fprintf(stderr, "msort: bad total %ld\n", sum); return 1; }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
