/* Waits with a clock: each round main starts a worker that computes the line to speed up while
   holding a lock, and main waits for it in one of glibc's clock variants, in turn:
   pthread_mutex_clocklock, pthread_rwlock_clockrdlock, pthread_rwlock_clockwrlock (the lock is
   released when the line ends), then pthread_clockjoin_np (the worker exits when the line ends).
   C++'s std::timed_mutex and std::shared_timed_mutex wait in the first three. Every wait is ended by
   the worker: main is woken by a thread of the program. Usage: clock_waits [rounds=300]
   [exit_status=0]. Prints "clock waits ok" and exits with exit_status, or exits 3. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <whatif.h>

#include "itest.h"

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t g_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static sem_t g_holding; /* posted once the worker holds its lock: main then waits for the lock */
static long g_round;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  const int kind = (int)(g_round % 4);
  if (kind == 0) ITEST_CHECK(pthread_mutex_lock(&g_mutex) == 0, "worker mutex lock");
  if (kind == 1 || kind == 2) ITEST_CHECK(pthread_rwlock_wrlock(&g_rwlock) == 0, "worker wrlock");
  ITEST_CHECK(sem_post(&g_holding) == 0, "sem_post");
  WORK(acc, 1500); /* @produce */
  if (kind == 0) ITEST_CHECK(pthread_mutex_unlock(&g_mutex) == 0, "worker mutex unlock");
  if (kind == 1 || kind == 2) ITEST_CHECK(pthread_rwlock_unlock(&g_rwlock) == 0, "worker rwlock unlock");
  return (void*)(uintptr_t)(acc | 1);
}

int main(int argc, char** argv) {
  const long rounds = itest_arg(argc, argv, 1, 300);
  uint64_t sink = 0;
  ITEST_CHECK(sem_init(&g_holding, 0, 0) == 0, "sem_init");
  for (g_round = 0; g_round < rounds; ++g_round) {
    pthread_t thread;
    ITEST_CHECK(pthread_create(&thread, NULL, worker, (void*)(uintptr_t)g_round) == 0, "create");
    ITEST_CHECK(sem_wait(&g_holding) == 0, "sem_wait");
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += 30;
    switch (g_round % 4) {
      case 0:
        ITEST_CHECK(pthread_mutex_clocklock(&g_mutex, CLOCK_MONOTONIC, &deadline) == 0, "clocklock");
        ITEST_CHECK(pthread_mutex_unlock(&g_mutex) == 0, "unlock");
        break;
      case 1:
        ITEST_CHECK(pthread_rwlock_clockrdlock(&g_rwlock, CLOCK_MONOTONIC, &deadline) == 0, "clockrdlock");
        ITEST_CHECK(pthread_rwlock_unlock(&g_rwlock) == 0, "rdunlock");
        break;
      case 2:
        ITEST_CHECK(pthread_rwlock_clockwrlock(&g_rwlock, CLOCK_MONOTONIC, &deadline) == 0, "clockwrlock");
        ITEST_CHECK(pthread_rwlock_unlock(&g_rwlock) == 0, "wrunlock");
        break;
      default:
        break;
    }
    void* result = NULL;
    ITEST_CHECK(pthread_clockjoin_np(thread, &result, CLOCK_MONOTONIC, &deadline) == 0 && result != NULL, "clockjoin");
    sink += (uint64_t)(uintptr_t)result;
    COZ_PROGRESS_NAMED("round");
  }
  printf("clock waits ok %llu\n", (unsigned long long)(sink & 1));
  return (int)itest_arg(argc, argv, 2, 0);
}
