/* Forks while a worker thread runs. The child works (threads, progress points of its own) and
   exits with a known status through exit() or _exit(); the parent checks it and carries on.
   Usage: fork exit|_exit [milliseconds=1200]. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static uint64_t g_deadline;

static void* parent_worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  while (itest_now_ns() < g_deadline) {
    WORK(acc, 300); /* @parent-work */
    COZ_PROGRESS_NAMED("parent");
  }
  return NULL;
}

static void* child_worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (int i = 0; i < 100; ++i) {
    WORK(acc, 300); /* @child-work */
    COZ_PROGRESS_NAMED("child-only");
  }
  return (void*)(uintptr_t)(acc | 1);
}

int main(int argc, char** argv) {
  ITEST_CHECK(argc >= 2, "usage: fork exit|_exit [milliseconds]");
  int fast = strcmp(argv[1], "_exit") == 0;
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 2, 1200) * 1000000ULL;
  pthread_t worker;
  pthread_create(&worker, NULL, parent_worker, (void*)1);
  struct timespec pause = {0, 200 * 1000000L};
  nanosleep(&pause, NULL);
  pid_t child = fork();
  ITEST_CHECK(child >= 0, "fork: %s", strerror(errno));
  if (child == 0) {
    pthread_t thread;
    void* result = NULL;
    ITEST_CHECK(pthread_create(&thread, NULL, child_worker, (void*)2) == 0, "create in child");
    pthread_join(thread, &result);
    ITEST_CHECK(result != NULL, "child worker");
    printf("child ok\n");
    fflush(stdout);
    if (fast) _exit(42);
    exit(42);
  }
  int status = 0;
  ITEST_CHECK(waitpid(child, &status, 0) == child, "waitpid");
  ITEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42, "child status %d", status);
  pthread_join(worker, NULL);
  printf("parent ok\n");
  return 0;
}
