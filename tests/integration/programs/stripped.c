/* Two functions of unequal cost and a progress point per round, built without debug info (with
   and without a symbol table): whatif must run it, keep its exit status and profile by function.
   Usage: stripped [milliseconds=1500] [exit-status=7]. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

__attribute__((noinline)) uint64_t stripped_heavy(uint64_t acc) {
  WORK(acc, 300);
  return acc;
}

__attribute__((noinline)) uint64_t stripped_light(uint64_t acc) {
  WORK(acc, 100);
  return acc;
}

static uint64_t g_deadline;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  while (itest_now_ns() < g_deadline) {
    acc = stripped_light(stripped_heavy(acc));
    COZ_PROGRESS_NAMED("round");
  }
  return (void*)(uintptr_t)(acc | 1);
}

int main(int argc, char** argv) {
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  pthread_t threads[2];
  for (long i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, worker, (void*)(i + 1));
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  printf("done\n");
  return (int)itest_arg(argc, argv, 2, 7);
}
