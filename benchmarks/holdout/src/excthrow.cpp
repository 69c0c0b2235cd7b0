// excthrow: single thread, library time in the C++ exception machinery. Per item, line A throws
// and catches A_THROWS x scaleA std::runtime_error exceptions (the throw and the catch are on the
// same line, so the work is __cxa_allocate_exception / __cxa_throw / _Unwind_RaiseException in
// libstdc++ and libgcc_s, the COW string copy in std::runtime_error and malloc/free), calibrated
// natively to take as long as line B at scale 1 (about 1 us a throw); line B is SPIN arithmetic,
// nominally 1 ms (~1.6 ms on the machine it was calibrated on). ~2 x 1 ms an item.
// One progress visit per item.
// Expected at s=60% (scale 0.4): A 30% (0.6 of 2 ms), B 30%.
#include "common.h"
#include <stdexcept>

#ifndef A_THROWS
#define A_THROWS 1350 /* calibrated natively (it drifts with load): ~1.0-1.3 us a throw+catch vs SPIN's ~1.6 ns an iteration */
#endif

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 450;
  const long a_throws = (long)(A_THROWS * scaleA + 0.5);
  const long b_iters = ms_iters(1.0, scaleB);
  static const char* msg = "holdout exception payload";
  volatile uint64_t sum = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    for (long k = 0; k < a_throws; k++) { try { throw std::runtime_error(msg); } catch (const std::exception& e) { sum = sum + (unsigned char)e.what()[(k + i) % 8]; } } // @line:A
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return (int)(sum & 0);
}
