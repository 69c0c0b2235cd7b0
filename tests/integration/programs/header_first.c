/* A unit whose first function comes from a header: GCC's DWARF 5 line table then names the header
   as file 1, the register's initial value, and the header's rows carry no file of their own. The
   work is all in header_first.h. Usage: header_first [milliseconds=1200]. */
#include <whatif.h>

#include "itest.h"
#include "header_first.h"

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1200) * 1000000ULL;
  uint64_t acc = 1;
  long items = 0;
  while (itest_now_ns() < deadline) {
    acc = header_work(acc);
    COZ_PROGRESS_NAMED("item");
    ++items;
  }
  printf("items=%ld %llu\n", items, (unsigned long long)(acc & 1));
  return 0;
}
