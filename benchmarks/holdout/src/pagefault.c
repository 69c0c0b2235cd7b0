/* Shape: single thread, kernel time in first-touch page faults. Per item, line A mmap()s a fresh
 * anonymous private region (no MAP_POPULATE), disables transparent hugepages on it with
 * madvise(MADV_NOHUGEPAGE), writes one byte in each of A_PAGES x scaleA 4 KiB pages (each write a
 * first-touch fault: the kernel allocates and zeroes a page) and munmap()s it, all on the one
 * marked line; A_PAGES (~2 MiB) is calibrated to ~1 ms at scale 1. Line B is a ~1 ms SPIN loop.
 * One progress visit per item.
 * Expected at s=60%: A ~30%, B ~30% (a little less for A: the mmap/munmap calls' fixed cost is
 * not scaled). */
#define _GNU_SOURCE
#include "common.h"
#include <sys/mman.h>
#include <unistd.h>

#ifndef A_PAGES
#define A_PAGES 512 /* 2 MiB; measured ~2.4 us a fault here, about line B's SPIN(1 ms) */
#endif
#define PAGE 4096

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 500;
  const long pages = (long)(A_PAGES * scaleA + 0.5);
  const size_t len = (size_t)(pages > A_PAGES ? pages : A_PAGES) * PAGE; /* the region: >= 2 MiB */
  const long b_iters = ms_iters(1.0, scaleB);
  long err = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    { char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); if (p == MAP_FAILED) { err = 1; break; } err |= madvise(p, len, MADV_NOHUGEPAGE) != 0; for (long k = 0; k < pages; k++) ((volatile char*)p)[k * PAGE] = (char)k; err |= munmap(p, len) != 0; } // @line:A
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  if (err) { perror("mmap/madvise/munmap"); return 1; }
  return 0;
}
