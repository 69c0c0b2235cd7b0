/* Shape: process tree. Each round the parent fork()s 2 children; each child runs line A (~1 ms
 * of compute) and _exit()s with a code of its own; meanwhile the parent runs line B (~0.7 ms),
 * then waitpid()s both children and checks their exit codes. 3 runnable processes on 2 CPUs.
 * One progress visit per round, in the parent (children never visit it).
 * Expected at s=60% (ideal 2-CPU sharing, fork/exit/wait cost ignored): round = max(CPU / 2,
 * longest process) = 2.7 / 2 = 1.35 ms; A: (0.8 + 0.7) / 2 = 0.75 ms -> ~44%;
 * B: (2 + 0.28) / 2 = 1.14 ms -> ~16%. fork + exit + waitpid cost ~0.4 ms a round on top (measured
 * with scaleA=0 scaleB=0), partly serial in the parent, which dilutes both (A ~35-44%, B ~12-16%). */
#define _GNU_SOURCE
#include "common.h"
#include <errno.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static long a_iters;

/* the child's whole life: compute, then leave without running atexit handlers or stdio flushes */
static __attribute__((noinline, noreturn)) void child_main(int which) {
  SPIN(a_iters); // @line:A
  _exit(10 + which);
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long rounds = n_items > 0 ? n_items : 500;
  a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(0.7, scaleB);
  fflush(stdout);
  uint64_t t0 = now_ns();
  for (long r = 0; r < rounds; r++) {
    pid_t pid[2];
    for (int i = 0; i < 2; i++) {
      pid[i] = fork();
      if (pid[i] < 0) { perror("fork"); return 1; }
      if (pid[i] == 0) child_main(i);
    }
    SPIN(b_iters); // @line:B
    for (int i = 0; i < 2; i++) {
      int st;
      pid_t w;
      while ((w = waitpid(pid[i], &st, 0)) < 0 && errno == EINTR) {}
      if (w != pid[i]) { perror("waitpid"); return 1; }
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 10 + i) {
        fprintf(stderr, "child %d of round %ld: bad status 0x%x\n", i, r, st);
        return 1;
      }
    }
    COZ_PROGRESS_NAMED("item");
  }
  printf("rounds=%ld\n", rounds);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
