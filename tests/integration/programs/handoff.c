/* Lock hand-off: two threads alternate on one mutex, with a short stretch of work outside it and a
   longer one inside, so the lock changes hands every ~70 microseconds. Usage: handoff [items=12000].
   Exits non-zero if an item was lost. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long done, items;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (;;) {
    WORK(acc, 30); /* @outside */
    pthread_mutex_lock(&lock);
    if (done >= items) {
      pthread_mutex_unlock(&lock);
      break;
    }
    WORK(acc, 70); /* @inside */
    ++done;
    pthread_mutex_unlock(&lock);
    COZ_PROGRESS_NAMED("item");
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  items = itest_arg(argc, argv, 1, 12000);
  pthread_t threads[2];
  void* results[2];
  for (int i = 0; i < 2; ++i) ITEST_CHECK(pthread_create(&threads[i], NULL, worker, (void*)(uintptr_t)(i + 1)) == 0, "create");
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], &results[i]);
  ITEST_CHECK(done == items, "done %ld of %ld items", done, items);
  printf("items=%ld sink=%llu\n", done, (unsigned long long)(((uintptr_t)results[0] ^ (uintptr_t)results[1]) & 1));
  return 0;
}
