// stdioloop: one thread, library calls that cost nanoseconds. Per item, line A writes ~300,000
// characters with putc to a buffered stream on /dev/null (~1 ms natively) and line B computes 1 ms.
// glibc skips a stream's lock while the process has one thread; a profiler's own thread must not
// make each putc pay for one (under whatif before session 34 this loop ran 2.8 times slower).
// Expected at s=60%: A ~25%, B ~35% (by the native split, ~40/60).
#include "common.h"
int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 600;
  const long chars = (long)(300000 * scaleA);
  FILE* sink = fopen("/dev/null", "w");
  if (!sink) return 1;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    for (long k = 0; k < chars; k++) putc('a' + (int)(k % 26), sink); // @line:A
    SPIN(ms_iters(1.0, scaleB)); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  fclose(sink);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
