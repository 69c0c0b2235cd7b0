/* A process pool: the parent forks workers, at most `parallel` at a time; each computes in one
   line and exits with a code of its own (through exit, _exit, or by exec'ing a shell that exits
   with it). The parent reaps them, checks each code and counts a progress point per reaped child.
   The workers' share of the work is `percent` of the full amount (the native ground truth for a
   speedup of their line). Usage: forkpool [children=40] [ms=40] [percent=100] [parallel=4]
   [status=5] [exit|_exit|exec]; exits with `status` when every child's code was right. */
#include <sys/wait.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static int child_code(int index) { return 10 + index % 50; }

static void run_child(int index, long units, const char* how) {
  uint64_t acc = (uint64_t)index + 1;
  for (long round = 0; round < units / 100; ++round) {
    WORK(acc, 100); /* @child-work */
  }
  COZ_PROGRESS_NAMED("child-done");
  if (acc == 0) printf("unlikely\n"); /* keeps the work */
  if (strcmp(how, "_exit") == 0) _exit(child_code(index));
  if (strcmp(how, "exec") == 0) {
    char command[32];
    snprintf(command, sizeof(command), "exit %d", child_code(index));
    execl("/bin/sh", "sh", "-c", command, (char*)NULL);
    _exit(2);
  }
  exit(child_code(index));
}

int main(int argc, char** argv) {
  int children = (int)itest_arg(argc, argv, 1, 40);
  long units = itest_arg(argc, argv, 2, 40) * 1000 * itest_arg(argc, argv, 3, 100) / 100;
  int parallel = (int)itest_arg(argc, argv, 4, 4);
  int status_on_success = (int)itest_arg(argc, argv, 5, 5);
  const char* how = argc > 6 ? argv[6] : "exit";
  pid_t pids[256];
  ITEST_CHECK(children > 0 && children <= 256 && parallel > 0, "usage: forkpool [children<=256] [ms] [percent] [parallel]");
  int started = 0, reaped = 0, running = 0, wrong = 0;
  while (reaped < children) {
    while (running < parallel && started < children) {
      pid_t pid = fork();
      ITEST_CHECK(pid >= 0, "fork: %s", strerror(errno));
      if (pid == 0) run_child(started, units, how);
      pids[started++] = pid;
      ++running;
    }
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    ITEST_CHECK(done > 0, "waitpid: %s", strerror(errno));
    int index = 0;
    while (index < started && pids[index] != done) ++index;
    ITEST_CHECK(index < started, "reaped an unknown child %d", (int)done);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != child_code(index)) ++wrong;
    --running;
    ++reaped;
    COZ_PROGRESS_NAMED("reaped");
  }
  ITEST_CHECK(wrong == 0, "%d children exited with the wrong code", wrong);
  printf("forkpool ok: %d children\n", children);
  return status_on_success;
}
