/* A shared library with debug info, loaded by dlopen_main with dlopen(3): its hot line should be
   profiled when the binary scope includes it. */
#include "itest.h"

uint64_t dlwork_step(uint64_t acc) {
  WORK(acc, 500); /* @dl-work */
  return acc;
}
