/* More busy threads than CPUs: twice as many as the process may use (or `threads`), each taking
   items from a shared counter and computing one line per item (and, with `other` > 0, a second
   line of `other` units after it), with a progress point per item. The program is CPU bound, so
   speeding the first line by s really shortens it by s (times its share of the work).
   Usage: crowd [items=3000] [threads=2 x CPUs] [other=0]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <whatif.h>

#include "itest.h"

static long items, other_units;
static atomic_long next_item;

static void* worker(void* unused) {
  (void)unused;
  uint64_t acc = 1;
  while (atomic_fetch_add(&next_item, 1) < items) {
    WORK(acc, 500); /* @crowd-work */
    WORK(acc, other_units); /* @crowd-other */
    COZ_PROGRESS_NAMED("item");
  }
  return (void*)(uintptr_t)(acc & 1);
}

int main(int argc, char** argv) {
  cpu_set_t cpus;
  long usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  items = itest_arg(argc, argv, 1, 3000);
  int threads = (int)itest_arg(argc, argv, 2, 2 * usable);
  other_units = itest_arg(argc, argv, 3, 0);
  ITEST_CHECK(threads > 0 && threads <= 256 && other_units >= 0, "usage: crowd [items] [threads<=256] [other]");
  pthread_t ids[256];
  for (int i = 0; i < threads; ++i) ITEST_CHECK(pthread_create(&ids[i], NULL, worker, NULL) == 0, "pthread_create");
  for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
  printf("crowd ok: %ld items on %d threads\n", items, threads);
  return 0;
}
