/* Built against Debian's /usr/include/coz.h, not whatif.h: its progress points must reach whatif
   through the Coz ABI. Usage: coz_h [milliseconds=1200]. */
#include <coz.h>
#include <pthread.h>

#include "itest.h"

static uint64_t g_deadline;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  long items = 0;
  while (itest_now_ns() < g_deadline) {
    WORK(acc, 300); /* @coz-work */
    COZ_PROGRESS_NAMED("coz-item");
    COZ_BEGIN("coz-latency");
    WORK(acc, 50);
    COZ_END("coz-latency");
    ++items;
  }
  return (void*)items;
}

int main(int argc, char** argv) {
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1200) * 1000000ULL;
  pthread_t threads[2];
  for (long i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, worker, (void*)(i + 1));
  long items = 0;
  for (int i = 0; i < 2; ++i) {
    void* result = NULL;
    pthread_join(threads[i], &result);
    items += (long)result;
  }
  printf("items=%ld\n", items);
  return items > 0 ? 0 : 3;
}
