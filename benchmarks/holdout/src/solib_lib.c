/* solib_lib: the shared library (libholdoutwork.so) half of `solib`; line A is here. */
#include "common.h"

void holdout_lib_work(long iters);

void holdout_lib_work(long iters) {
  SPIN(iters); // @line:A
}
