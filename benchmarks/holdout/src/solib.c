/* solib: single thread; per item it calls holdout_lib_work() in libholdoutwork.so (built from
 * solib_lib.c, found through rpath $ORIGIN), whose line A spins 1 ms, then does B (1 ms) in the main
 * program. Line A's marker is in solib_lib.c. Expected at s=60%: A 30%, B 30%. */
#include "common.h"

void holdout_lib_work(long iters); /* libholdoutwork.so */

static void main_work(void) {
  SPIN(ms_iters(1.0, scaleB)); // @line:B
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  long items = n_items > 0 ? n_items : 500;
  uint64_t t0 = now_ns();
  for (long i = 0; i < items; i++) {
    holdout_lib_work(ms_iters(1.0, scaleA));
    main_work();
    COZ_PROGRESS_NAMED("item");
  }
  printf("items=%ld\n", items);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
