/* Rounds of short-lived workers: each round main starts one worker per usable CPU, a forked child
   process or a pthread; each runs its line (WORK 1000, line spawn-worker) and ends, while main runs
   its own line (WORK 700, line spawn-main), then reaps or joins them all and visits a progress
   point. One more runnable worker than CPUs while main works.
   Usage: spawn_rounds [rounds=600] [fork|thread] [workers=usable CPUs]. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static uint64_t work(uint64_t seed) {
  uint64_t acc = seed + 1;
  WORK(acc, 1000); /* @spawn-worker */
  return acc;
}

static void* thread_worker(void* index) { return (void*)(uintptr_t)(work((uintptr_t)index) | 1); }

int main(int argc, char** argv) {
  cpu_set_t cpus;
  long usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  long rounds = itest_arg(argc, argv, 1, 600);
  const char* mode = argc > 2 ? argv[2] : "fork";
  int workers = (int)itest_arg(argc, argv, 3, usable);
  int forking = strcmp(mode, "fork") == 0;
  ITEST_CHECK(rounds > 0 && workers > 0 && workers <= 16 && (forking || strcmp(mode, "thread") == 0),
              "usage: spawn_rounds [rounds] [fork|thread] [workers<=16]");
  uint64_t acc = 1;
  for (long round = 0; round < rounds; ++round) {
    pid_t pids[16];
    pthread_t threads[16];
    for (int i = 0; i < workers; ++i) {
      if (!forking) {
        ITEST_CHECK(pthread_create(&threads[i], NULL, thread_worker, (void*)(uintptr_t)i) == 0, "pthread_create");
        continue;
      }
      pids[i] = fork();
      ITEST_CHECK(pids[i] >= 0, "fork: %s", strerror(errno));
      if (pids[i] == 0) _exit(work((uint64_t)i) == 0 ? 1 : 10 + i);
    }
    WORK(acc, 700); /* @spawn-main */
    for (int i = 0; i < workers; ++i) {
      if (!forking) {
        void* result = NULL;
        ITEST_CHECK(pthread_join(threads[i], &result) == 0 && result != NULL, "worker %d's join", i);
        continue;
      }
      int status = 0;
      pid_t done;
      while ((done = waitpid(pids[i], &status, 0)) < 0 && errno == EINTR) {}
      ITEST_CHECK(done == pids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 10 + i, "child %d's exit", i);
    }
    COZ_PROGRESS_NAMED("round");
  }
  printf("spawn_rounds ok %llu\n", (unsigned long long)(acc & 1));
  return 0;
}
