/* A worker thread ends the process while main is blocked in pthread_join on another thread:
   with exit(7), _exit(7) or abort().
   Usage: exit_thread [milliseconds=800] [exit|_exit|abort]. */
#include <pthread.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static uint64_t g_deadline;
static const char* g_how = "exit";

static void* blocker(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

static void* exiter(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  while (itest_now_ns() < g_deadline) {
    WORK(acc, 200); /* @exiter-work */
    COZ_PROGRESS_NAMED("work");
  }
  printf("exiting from a worker\n");
  fflush(stdout);
  if (strcmp(g_how, "_exit") == 0) _exit(7);
  if (strcmp(g_how, "abort") == 0) abort();
  exit(7);
}

int main(int argc, char** argv) {
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 800) * 1000000ULL;
  if (argc > 2) g_how = argv[2];
  pthread_t a, b;
  pthread_create(&a, NULL, blocker, NULL);
  pthread_create(&b, NULL, exiter, (void*)1);
  pthread_join(a, NULL);
  return 0;
}
