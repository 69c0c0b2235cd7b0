/* Threads blocked in cancellation points (pthread_cond_wait, sem_wait, read on a pipe, nanosleep,
   pthread_join) are cancelled; cleanup handlers must run and the program carries on working.
   Usage: cancel [milliseconds=1000]. */
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

enum { kKinds = 5 };
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_never = PTHREAD_COND_INITIALIZER;
static sem_t g_sem;
static int g_pipe[2];
static int g_cleanups;
static pthread_t g_sleeper;

static void cleanup(void* arg) {
  if (arg != NULL) pthread_mutex_unlock((pthread_mutex_t*)arg);
  __atomic_add_fetch(&g_cleanups, 1, __ATOMIC_SEQ_CST);
}

static void* blocked(void* arg) {
  long kind = (long)arg;
  uint64_t acc = (uint64_t)kind;
  WORK(acc, 500); /* @before-blocking */
  if (kind == 0) {
    pthread_mutex_lock(&g_mutex);
    pthread_cleanup_push(cleanup, &g_mutex);
    for (;;) pthread_cond_wait(&g_never, &g_mutex);
    pthread_cleanup_pop(0);
  } else {
    pthread_cleanup_push(cleanup, NULL);
    char byte;
    struct timespec long_time = {3600, 0};
    switch (kind) {
      case 1: for (;;) sem_wait(&g_sem);
      case 2: for (;;) (void)!read(g_pipe[0], &byte, 1);
      case 3: for (;;) nanosleep(&long_time, NULL);
      default: pthread_join(g_sleeper, NULL); for (;;) pause();
    }
    pthread_cleanup_pop(0);
  }
  return NULL;
}

int main(int argc, char** argv) {
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1000) * 1000000ULL;
  sem_init(&g_sem, 0, 0);
  ITEST_CHECK(pipe(g_pipe) == 0, "pipe");
  uint64_t acc = 1;
  long round = 0;
  while (itest_now_ns() < deadline) {
    pthread_t threads[kKinds];
    g_cleanups = 0;
    pthread_create(&g_sleeper, NULL, blocked, (void*)3);
    for (long kind = 0; kind < kKinds; ++kind) {
      if (kind == 3) threads[kind] = g_sleeper;
      else pthread_create(&threads[kind], NULL, blocked, (void*)kind);
    }
    WORK(acc, 2000); /* @main-work */
    COZ_PROGRESS_NAMED("round");
    for (long kind = kKinds - 1; kind >= 0; --kind) {
      ITEST_CHECK(pthread_cancel(threads[kind]) == 0, "cancel %ld", kind);
      void* result = NULL;
      ITEST_CHECK(pthread_join(threads[kind], &result) == 0, "join %ld", kind);
      ITEST_CHECK(result == PTHREAD_CANCELED, "thread %ld was not cancelled", kind);
    }
    ITEST_CHECK(g_cleanups == kKinds, "round %ld: %d cleanup handlers ran, expected %d", round, g_cleanups, kKinds);
    ITEST_CHECK(pthread_mutex_trylock(&g_mutex) == 0, "the condition variable's mutex is still locked");
    pthread_mutex_unlock(&g_mutex);
    ++round;
  }
  printf("cancel ok rounds=%ld\n", round);
  return 0;
}
