// Shape: single thread, inlined template code from system headers. Per item a fresh copy of
// random records is made (always the full size, independent of scaleA), then line A sorts
// A_CHUNKS x scaleA chunks of K records each with std::sort and a comparator lambda (all of
// std::sort's introsort is inlined from <bits/stl_algo.h>), ~1 ms at scale 1; line B is a
// plain arithmetic loop (1 ms). One progress visit per item.
#include "common.h"
#include <algorithm>
#include <vector>

#ifndef A_CHUNKS
#define A_CHUNKS 33
#endif
static const long K = 1024;

struct Rec { uint32_t key; uint32_t payload; };

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 450;
  // calibrated so line A takes ~1 ms per item at scale 1
  const long a_chunks = (long)(A_CHUNKS * scaleA + 0.5);
  const long b_iters = ms_iters(1.0, scaleB);
  const long total = (long)A_CHUNKS * K;
  std::vector<Rec> src(total * 8), v(total);
  uint64_t x = 88172645463325252ull;
  for (auto& r : src) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; r.key = (uint32_t)x; r.payload = (uint32_t)(x >> 32); }
  auto cmp = [](const Rec& a, const Rec& b) { return a.key < b.key; };
  uint64_t check = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    std::copy(src.begin() + (i % 8) * total, src.begin() + (i % 8 + 1) * total, v.begin());
    for (long c = 0; c < a_chunks; c++) std::sort(v.begin() + c * K, v.begin() + (c + 1) * K, cmp); // @line:A
    SPIN(b_iters); // @line:B
    check += v[0].key;
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return (int)(check & 0);
}
