/* Process-per-task rounds: each round the parent forks one child per usable CPU; each child runs
   its line (WORK 1000, line fork-child) and _exits with a code of its own, while the parent runs
   its own line (WORK 700, line fork-parent), then reaps them all and visits a progress point.
   One more runnable process than CPUs while the parent works, as spawnjoin-style thread rounds
   have with threads. Usage: fork_rounds [rounds=600] [children=usable CPUs]. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static void child(int index) {
  uint64_t acc = (uint64_t)index + 1;
  WORK(acc, 1000); /* @fork-child */
  _exit(acc == 0 ? 1 : 10 + index);
}

int main(int argc, char** argv) {
  cpu_set_t cpus;
  long usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  long rounds = itest_arg(argc, argv, 1, 600);
  int children = (int)itest_arg(argc, argv, 2, usable);
  ITEST_CHECK(rounds > 0 && children > 0 && children <= 16, "usage: fork_rounds [rounds] [children<=16]");
  uint64_t acc = 1;
  for (long round = 0; round < rounds; ++round) {
    pid_t pids[16];
    for (int i = 0; i < children; ++i) {
      pids[i] = fork();
      ITEST_CHECK(pids[i] >= 0, "fork: %s", strerror(errno));
      if (pids[i] == 0) child(i);
    }
    WORK(acc, 700); /* @fork-parent */
    for (int i = 0; i < children; ++i) {
      int status = 0;
      pid_t done;
      while ((done = waitpid(pids[i], &status, 0)) < 0 && errno == EINTR) {}
      ITEST_CHECK(done == pids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 10 + i, "child %d's exit", i);
    }
    COZ_PROGRESS_NAMED("round");
  }
  printf("fork_rounds ok %llu\n", (unsigned long long)(acc & 1));
  return 0;
}
