/* Runs child processes the ways libraries do (system, popen, posix_spawn) while worker threads
   are busy; the children are not preloaded and their results come back intact.
   Usage: spawn REPORT_FILE [milliseconds=1200]. */
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <whatif.h>

#include "itest.h"

extern char** environ;
static uint64_t g_deadline;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  while (itest_now_ns() < g_deadline) {
    WORK(acc, 300); /* @spawn-work */
    COZ_PROGRESS_NAMED("work");
  }
  return NULL;
}

int main(int argc, char** argv) {
  ITEST_CHECK(argc >= 2, "usage: spawn REPORT_FILE [milliseconds]");
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 2, 1200) * 1000000ULL;
  pthread_t threads[2];
  for (long i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, worker, (void*)(i + 1));
  long children = 0;
  while (itest_now_ns() < g_deadline) {
    int status = system("exit 3");
    ITEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3, "system returned %d", status);
    FILE* pipe = popen("echo popen-ok", "r");
    ITEST_CHECK(pipe != NULL, "popen");
    char line[64] = {0};
    ITEST_CHECK(fgets(line, sizeof(line), pipe) != NULL && strcmp(line, "popen-ok\n") == 0, "popen read '%s'", line);
    ITEST_CHECK(pclose(pipe) == 0, "pclose");
    pid_t pid;
    char* spawn_argv[] = {"/bin/sh", "-c", "exit 4", NULL};
    ITEST_CHECK(posix_spawn(&pid, "/bin/sh", NULL, NULL, spawn_argv, environ) == 0, "posix_spawn");
    ITEST_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 4, "spawned status %d", status);
    children += 3;
  }
  char command[4200];
  snprintf(command, sizeof(command), "echo \"LD_PRELOAD=$LD_PRELOAD\" > '%s'", argv[1]);
  ITEST_CHECK(system(command) == 0, "report");
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  printf("spawn ok children=%ld\n", children);
  return 0;
}
