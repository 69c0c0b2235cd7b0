/* Closes every descriptor above stderr, as daemons do, then writes its own data file. The file must
   hold exactly what the program wrote: no profile record may land in a descriptor it reused.
   Usage: close_fds DATA_FILE [milliseconds=800] [how=loop|close_range|syscall|closefrom]: a close()
   loop, close_range(3), syscall(SYS_close_range) or glibc's closefrom. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

int main(int argc, char** argv) {
  ITEST_CHECK(argc >= 2, "usage: close_fds DATA_FILE [milliseconds]");
  const char* how = argc > 3 ? argv[3] : "loop";
  if (strcmp(how, "close_range") == 0) {
    ITEST_CHECK(close_range(3, ~0U, 0) == 0, "close_range");
  } else if (strcmp(how, "syscall") == 0) {
    ITEST_CHECK(syscall(SYS_close_range, 3, ~0U, 0) == 0, "syscall(SYS_close_range)");
  } else if (strcmp(how, "closefrom") == 0) {
    closefrom(3);
  } else {
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    long max_fd = limit.rlim_cur < 65536 ? (long)limit.rlim_cur : 65536;
    for (long fd = 3; fd < max_fd; ++fd) close((int)fd);
  }
  int data = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ITEST_CHECK(data >= 0, "open %s", argv[1]);
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 2, 800) * 1000000ULL;
  uint64_t acc = 1;
  long lines = 0;
  while (itest_now_ns() < deadline) {
    WORK(acc, 300); /* @fds-work */
    COZ_PROGRESS_NAMED("line");
    ITEST_CHECK(write(data, "data\n", 5) == 5, "write");
    ++lines;
  }
  close(data);
  FILE* in = fopen(argv[1], "r");
  ITEST_CHECK(in != NULL, "reopen");
  char line[4096];
  long seen = 0;
  while (fgets(line, sizeof(line), in) != NULL) {
    ITEST_CHECK(strcmp(line, "data\n") == 0, "foreign line %ld in the data file: %.200s", seen, line);
    ++seen;
  }
  fclose(in);
  ITEST_CHECK(seen == lines, "%ld lines written, %ld read back", lines, seen);
  printf("close_fds ok lines=%ld\n", lines);
  return 0;
}
