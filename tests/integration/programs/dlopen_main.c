/* Loads a library with dlopen after start-up and spends most of its time in it.
   Usage: dlopen_main LIBRARY [milliseconds=1500]. */
#include <dlfcn.h>
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

typedef uint64_t (*step_fn)(uint64_t);
static step_fn g_step;
static uint64_t g_deadline;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  while (itest_now_ns() < g_deadline) {
    acc = g_step(acc);
    WORK(acc, 20); /* @main-work */
    COZ_PROGRESS_NAMED("step");
  }
  return (void*)(uintptr_t)(acc | 1);
}

int main(int argc, char** argv) {
  ITEST_CHECK(argc >= 2, "usage: dlopen_main LIBRARY [milliseconds]");
  struct timespec pause = {0, 100 * 1000000L};
  nanosleep(&pause, NULL); /* the runtime has read the start-up objects by now */
  void* library = dlopen(argv[1], RTLD_NOW);
  ITEST_CHECK(library != NULL, "dlopen: %s", dlerror());
  *(void**)&g_step = dlsym(library, "dlwork_step");
  ITEST_CHECK(g_step != NULL, "dlsym: %s", dlerror());
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 2, 1500) * 1000000ULL;
  pthread_t threads[2];
  for (long i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, worker, (void*)(i + 1));
  for (int i = 0; i < 2; ++i) {
    void* result = NULL;
    pthread_join(threads[i], &result);
    ITEST_CHECK(result != NULL, "worker");
  }
  printf("dlopen ok\n");
  return 0;
}
