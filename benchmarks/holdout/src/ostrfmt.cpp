// ostrfmt: single thread, library time in iostreams. Per item, line A builds A_FMTS (1350) x scaleA
// strings with a fresh std::ostringstream each (constructing the stream and its locale state,
// formatting two doubles and an int through num_put, then str()), all in libstdc++ (the
// basic_ostringstream<char> members are extern templates), calibrated natively to take as long as
// line B at scale 1 (about 1 us a stream); line B is SPIN arithmetic, nominally 1 ms (~1.6 ms on
// the machine it was calibrated on). ~2 x 1 ms an item. One progress visit per item.
// Expected at s=60% (scale 0.4): A 30% (0.6 of 2 ms), B 30%.
#include "common.h"
#include <sstream>
#include <string>

#ifndef A_FMTS
#define A_FMTS 1350 /* calibrated natively (it drifts with load): ~1.0-1.3 us a stream vs SPIN's ~1.6 ns an iteration */
#endif

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 450;
  const long a_fmts = (long)(A_FMTS * scaleA + 0.5);
  const long b_iters = ms_iters(1.0, scaleB);
  volatile uint64_t sum = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    for (long k = 0; k < a_fmts; k++) { std::ostringstream os; os << (double)k * 1.000123 + (double)i << ' ' << k * 7919 << ' ' << 3.14159 / (double)(k + 1); sum = sum + os.str().size(); } // @line:A
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return (int)(sum & 0);
}
