/* main returns while detached threads are still busy locking, signalling and hitting progress
   points: the runtime must finish the profile without crashing or hanging at exit.
   Usage: detached [milliseconds=400]. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static long g_counter;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (;;) {
    WORK(acc, 100); /* @detached-work */
    pthread_mutex_lock(&g_mutex);
    ++g_counter;
    if (g_counter % 2) pthread_cond_signal(&g_cond);
    else pthread_cond_wait(&g_cond, &g_mutex);
    pthread_mutex_unlock(&g_mutex);
    COZ_PROGRESS_NAMED("work");
  }
  return NULL;
}

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 400) * 1000000ULL;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (long i = 0; i < 4; ++i) {
    pthread_t thread;
    ITEST_CHECK(pthread_create(&thread, &attr, worker, (void*)(i + 1)) == 0, "create");
  }
  uint64_t acc = 9;
  while (itest_now_ns() < deadline) {
    WORK(acc, 100); /* @detached-main */
    pthread_mutex_lock(&g_mutex);
    pthread_cond_broadcast(&g_cond);
    pthread_mutex_unlock(&g_mutex);
  }
  printf("main returns with workers running\n");
  return 0;
}
