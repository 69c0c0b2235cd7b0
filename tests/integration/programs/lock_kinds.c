/* Every kind of mutex and rwlock keeps its own answers under the runtime, which tries a lock before
   it blocks on it: error-checking (EDEADLK, EPERM), recursive, robust (EOWNERDEAD), rwlocks
   (EDEADLK), and a lock held by another thread still blocks until it is released. Exits 3 naming
   the first answer that differs. Usage: lock_kinds */
#include <pthread.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static pthread_mutex_t g_robust;
static pthread_mutex_t g_held = PTHREAD_MUTEX_INITIALIZER;
static volatile int g_holding, g_released;

static void* die_holding(void* arg) {
  (void)arg;
  ITEST_CHECK(pthread_mutex_lock(&g_robust) == 0, "robust lock by its first owner");
  return NULL;  /* exits holding it */
}

static void* hold_a_while(void* arg) {
  (void)arg;
  ITEST_CHECK(pthread_mutex_lock(&g_held) == 0, "lock by the holder");
  g_holding = 1;
  usleep(50000);
  g_released = 1;
  ITEST_CHECK(pthread_mutex_unlock(&g_held) == 0, "unlock by the holder");
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_mutex_t mutex;

  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&mutex, &attr);
  ITEST_CHECK(pthread_mutex_lock(&mutex) == 0, "errorcheck lock");
  ITEST_CHECK(pthread_mutex_lock(&mutex) == EDEADLK, "errorcheck relock must be EDEADLK");
  ITEST_CHECK(pthread_mutex_unlock(&mutex) == 0, "errorcheck unlock");
  ITEST_CHECK(pthread_mutex_unlock(&mutex) == EPERM, "errorcheck unlock of an unlocked mutex must be EPERM");
  pthread_mutex_destroy(&mutex);

  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&mutex, &attr);
  ITEST_CHECK(pthread_mutex_lock(&mutex) == 0 && pthread_mutex_lock(&mutex) == 0, "recursive lock twice");
  ITEST_CHECK(pthread_mutex_unlock(&mutex) == 0 && pthread_mutex_unlock(&mutex) == 0, "recursive unlock twice");
  ITEST_CHECK(pthread_mutex_unlock(&mutex) == EPERM, "recursive unlock once too often must be EPERM");
  pthread_mutex_destroy(&mutex);

  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_NORMAL);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&g_robust, &attr);
  pthread_t thread;
  ITEST_CHECK(pthread_create(&thread, NULL, die_holding, NULL) == 0, "create");
  pthread_join(thread, NULL);
  ITEST_CHECK(pthread_mutex_lock(&g_robust) == EOWNERDEAD, "a robust mutex whose owner died must be EOWNERDEAD");
  ITEST_CHECK(pthread_mutex_consistent(&g_robust) == 0 && pthread_mutex_unlock(&g_robust) == 0, "robust recovery");
  ITEST_CHECK(pthread_mutex_lock(&g_robust) == 0 && pthread_mutex_unlock(&g_robust) == 0, "robust after recovery");
  pthread_mutexattr_destroy(&attr);

  pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
  ITEST_CHECK(pthread_rwlock_wrlock(&rwlock) == 0, "wrlock");
  ITEST_CHECK(pthread_rwlock_rdlock(&rwlock) == EDEADLK, "rdlock under one's own wrlock must be EDEADLK");
  ITEST_CHECK(pthread_rwlock_wrlock(&rwlock) == EDEADLK, "wrlock under one's own wrlock must be EDEADLK");
  ITEST_CHECK(pthread_rwlock_unlock(&rwlock) == 0, "rwlock unlock");
  ITEST_CHECK(pthread_rwlock_rdlock(&rwlock) == 0 && pthread_rwlock_rdlock(&rwlock) == 0, "rdlock twice");
  ITEST_CHECK(pthread_rwlock_unlock(&rwlock) == 0 && pthread_rwlock_unlock(&rwlock) == 0, "rdlock unlock twice");

  ITEST_CHECK(pthread_create(&thread, NULL, hold_a_while, NULL) == 0, "create");
  while (!g_holding) usleep(1000);
  ITEST_CHECK(pthread_mutex_lock(&g_held) == 0, "lock of a held mutex");
  ITEST_CHECK(g_released, "the lock of a mutex another thread held returned before it was released");
  ITEST_CHECK(pthread_mutex_unlock(&g_held) == 0, "unlock");
  pthread_join(thread, NULL);

  COZ_PROGRESS_NAMED("checked");
  printf("lock kinds ok\n");
  return 0;
}
