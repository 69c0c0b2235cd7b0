/* Known-answer workload: a process pool. The parent forks `procs` children at a time (default:
   twice the CPUs the process may use), each computing `rounds` of line A (WORK) and exiting with a
   code of its own; the parent reaps each, checks its code, runs line B (FLOPS) for it and counts a
   progress point. Children share the CPUs with each other and with the parent: speeding A by s
   shortens the run by about s times A's share of the CPU time. One process tree, one answer. */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static int code_of(long index) { return (int)(10 + index % 50); }

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 100);  /* WORK units per child round (line A) */
  const double b = wl_arg(argc, argv, "b", 3000); /* FLOPS units per reaped child (line B) */
  const long rounds = (long)wl_arg(argc, argv, "rounds", 200);
  const long children = (long)wl_arg(argc, argv, "children", 120);
  cpu_set_t cpus;
  const int usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  const long procs = (long)wl_arg(argc, argv, "procs", 2.0 * usable);
  pid_t pids[1024];
  if (children > 1024 || procs < 1) { fprintf(stderr, "usage: children <= 1024, procs >= 1\n"); return 2; }
  long started = 0, reaped = 0, running = 0, wrong = 0;
  double x = 1.0;
  const uint64_t t0 = wl_now_ns();
  while (reaped < children) {
    while (running < procs && started < children) {
      pid_t pid = fork();
      if (pid < 0) { perror("fork"); return 2; }
      if (pid == 0) {
        uint64_t acc = (uint64_t)started + 1;
        for (long r = 0; r < rounds; ++r) {
          WORK(acc, a); /* @line:A */
        }
        _exit(acc == 0 ? 1 : code_of(started));
      }
      pids[started++] = pid;
      ++running;
    }
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) { perror("waitpid"); return 2; }
    long index = 0;
    while (index < started && pids[index] != done) ++index;
    if (index == started || !WIFEXITED(status) || WEXITSTATUS(status) != code_of(index)) ++wrong;
    --running;
    ++reaped;
    FLOPS(x, b); /* @line:B */
    COZ_PROGRESS_NAMED("item");
  }
  if (wrong != 0) { fprintf(stderr, "%ld children exited with the wrong code\n", wrong); return 3; }
  wl_report(wl_now_ns() - t0, (uint64_t)children, 0, (uint64_t)x);
  return 0;
}
