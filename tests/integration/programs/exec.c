/* Works for a while, then replaces itself: with /bin/true, or with itself in "report" mode, which
   writes the LD_PRELOAD it sees to a file. execve with main's own envp is covered too.
   Usage: exec true|self|self-envp [milliseconds=600] [report_file]; exec report FILE. */
#include <pthread.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

extern char** environ;

int main(int argc, char** argv, char** envp) {
  ITEST_CHECK(argc >= 2, "usage: exec true|self|self-envp|report ...");
  if (strcmp(argv[1], "report") == 0) {
    ITEST_CHECK(argc >= 3, "report needs a file");
    FILE* out = fopen(argv[2], "w");
    ITEST_CHECK(out != NULL, "open %s", argv[2]);
    const char* preload = getenv("LD_PRELOAD");
    fprintf(out, "LD_PRELOAD=%s\n", preload ? preload : "");
    fclose(out);
    return 0;
  }
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 2, 600) * 1000000ULL;
  uint64_t acc = 1;
  while (itest_now_ns() < deadline) {
    WORK(acc, 300); /* @before-exec */
    COZ_PROGRESS_NAMED("before-exec");
  }
  fflush(stdout);
  if (strcmp(argv[1], "true") == 0) {
    execl("/bin/true", "true", (char*)NULL);
  } else {
    ITEST_CHECK(argc >= 4, "self needs a report file");
    char* child_argv[] = {argv[0], "report", argv[3], NULL};
    if (strcmp(argv[1], "self-envp") == 0) execve("/proc/self/exe", child_argv, envp);
    else execv("/proc/self/exe", child_argv);
  }
  fprintf(stderr, "exec failed: %s\n", strerror(errno));
  return 3;
}
