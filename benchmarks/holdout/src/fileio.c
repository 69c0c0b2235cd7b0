/* Shape: single thread, real file I/O syscalls. Per item, line A does A_CALLS x scaleA
 * pwrite()+pread() pairs of 64 KiB blocks on a temporary file in /tmp (16 blocks, page cache
 * only, no fsync), ~1 ms at scale 1; line B is a plain arithmetic loop (1 ms).
 * The file is unlinked at exit. One progress visit per item. */
#define _GNU_SOURCE
#include "common.h"
#include <fcntl.h>
#include <unistd.h>

#ifndef A_CALLS
#define A_CALLS 340
#endif
#define BLK (64 * 1024)
#define NBLK 16

static char wbuf[BLK], rbuf[BLK];
static char path[] = "/tmp/holdout_fileio_XXXXXX";
static int fd = -1;

static void cleanup(void) { if (fd >= 0) { close(fd); unlink(path); } }

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 450;
  /* calibrated so line A takes ~1 ms per item at scale 1 */
  const long a_calls = (long)(A_CALLS * scaleA + 0.5);
  const long b_iters = ms_iters(1.0, scaleB);
  fd = mkstemp(path);
  if (fd < 0) { perror("mkstemp"); return 1; }
  atexit(cleanup);
  memset(wbuf, 'x', BLK);
  for (long b = 0; b < NBLK; b++) if (pwrite(fd, wbuf, BLK, (off_t)b * BLK) != BLK) { perror("pwrite"); return 1; }
  long err = 0, k = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    for (long c = 0; c < a_calls; c++, k++) { off_t off = (off_t)(k % NBLK) * BLK; err |= pwrite(fd, wbuf, BLK, off) != BLK; err |= pread(fd, rbuf, BLK, off) != BLK; } // @line:A
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  if (err) { fprintf(stderr, "I/O error\n"); return 1; }
  return 0;
}
