/* One thread; per round, one line reads from /dev/zero in 256 KiB blocks (the kernel clears the user
   buffer: nearly all of its time is in the kernel) for about 55% of the thread's CPU time, and the
   next line is a plain loop for the rest. Kernel-mode samples must go to the reading line.
   Usage: syscall_line [milliseconds=1500]. */
#include <fcntl.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

#define BLOCK_BYTES (256 * 1024)
#define READ_NS 1100000ULL /* per round: 55% in the reading line */
#define LOOP_NS 900000ULL  /* 45% in the loop line */

static unsigned char buffer[BLOCK_BYTES];

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  int zero = open("/dev/zero", O_RDONLY);
  if (zero < 0) {
    perror("/dev/zero");
    return 1;
  }
  uint64_t acc = 1;
  long rounds = 0, reads = 0;
  while (itest_now_ns() < deadline) {
    uint64_t start = itest_thread_cpu_ns();
    do { for (int i = 0; i < 4; ++i, ++reads) if (read(zero, buffer, sizeof(buffer)) != (ssize_t)sizeof(buffer)) return 1; } while (itest_thread_cpu_ns() - start < READ_NS); /* @read */
    start = itest_thread_cpu_ns();
    do WORK(acc, 40); while (itest_thread_cpu_ns() - start < LOOP_NS); /* @loop */
    COZ_PROGRESS_NAMED("round");
    ++rounds;
  }
  printf("rounds=%ld reads=%ld sink=%llu\n", rounds, reads, (unsigned long long)((acc & 1) + buffer[rounds % BLOCK_BYTES]));
  close(zero);
  return 0;
}
