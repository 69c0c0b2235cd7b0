/* header_first.c's work, in a header whose function comes first in the unit (see there). */
static uint64_t __attribute__((noinline)) header_work(uint64_t acc) {
  WORK(acc, 500); /* @header-work */
  return acc;
}
