/* Creates over a thousand threads, either in waves or all alive at once (they meet at a barrier),
   each adding its index to a total that main checks.
   Usage: many_threads waves|all [threads=1200]. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

static pthread_barrier_t g_barrier;
static int g_use_barrier;
static long g_total;
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;

static void* worker(void* arg) {
  long index = (long)arg;
  uint64_t acc = (uint64_t)index;
  if (g_use_barrier) pthread_barrier_wait(&g_barrier);
  WORK(acc, index % 50 == 0 ? 3000 : 200); /* @many-work */ /* some outlive a sampling period */
  pthread_mutex_lock(&g_mutex);
  g_total += index;
  pthread_mutex_unlock(&g_mutex);
  COZ_PROGRESS_NAMED("thread-done");
  return (void*)(uintptr_t)(acc & 1);
}

int main(int argc, char** argv) {
  ITEST_CHECK(argc >= 2, "usage: many_threads waves|all [threads]");
  long count = itest_arg(argc, argv, 2, 1200);
  g_use_barrier = strcmp(argv[1], "all") == 0;
  long wave = g_use_barrier ? count : 100;
  pthread_t* threads = calloc((size_t)count, sizeof(pthread_t));
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  if (g_use_barrier) pthread_barrier_init(&g_barrier, NULL, (unsigned)count);
  for (long first = 0; first < count; first += wave) {
    long last = first + wave < count ? first + wave : count;
    for (long i = first; i < last; ++i) {
      int result = pthread_create(&threads[i], &attr, worker, (void*)i);
      ITEST_CHECK(result == 0, "pthread_create %ld: %s", i, strerror(result));
    }
    for (long i = first; i < last; ++i) pthread_join(threads[i], NULL);
  }
  long expected = count * (count - 1) / 2;
  ITEST_CHECK(g_total == expected, "total %ld, expected %ld", g_total, expected);
  printf("threads=%ld ok\n", count);
  free(threads);
  return 0;
}
