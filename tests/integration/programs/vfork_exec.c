/* vfork, then exec in the child, as older process-spawning code does: the child shares the
   parent's memory (the runtime's state among it) until its exec. Then the parent computes and
   counts progress, and waits for the child. Usage: vfork_exec [milliseconds=900] [exit_status=0].
   Exits 3 if the child fails. */
#include <sys/wait.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

int main(int argc, char** argv) {
  pid_t child = vfork();
  if (child == 0) {
    execl("/bin/true", "true", (char*)NULL);
    _exit(127);
  }
  ITEST_CHECK(child > 0, "vfork");
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 900) * 1000000ULL;
  uint64_t acc = 1;
  long items = 0;
  while (itest_now_ns() < deadline) {
    WORK(acc, 300); /* @vfork-work */
    COZ_PROGRESS_NAMED("item");
    ++items;
  }
  int status = 0;
  ITEST_CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child");
  printf("vfork_exec items=%ld %llu\n", items, (unsigned long long)(acc & 1));
  return (int)itest_arg(argc, argv, 2, 0);
}
