/* C11 threads (<threads.h>): a producer started with thrd_create computes each item (the line to
   speed up) and hands it over under an mtx_t and a cnd_t; main waits for it in cnd_wait, then does
   a little work of its own. glibc builds these calls on its internal pthread functions, past the
   pthread shims. Also checks that the C11 calls keep their own answers under the runtime: the
   thread's int result through thrd_join, thrd_busy from mtx_trylock, thrd_timedout from
   mtx_timedlock, thrd_sleep and thrd_yield. Usage: c11_threads [items=3000] [exit_status=0].
   Prints "c11 ok" and exits with exit_status, or exits 3 naming the first wrong answer. */
#include <threads.h>
#include <whatif.h>

#include "itest.h"

static mtx_t g_mutex;
static cnd_t g_ready;
static long g_items, g_produced;

static int producer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    WORK(acc, 200); /* @produce */
    ITEST_CHECK(mtx_lock(&g_mutex) == thrd_success, "mtx_lock by the producer");
    ++g_produced;
    ITEST_CHECK(cnd_signal(&g_ready) == thrd_success, "cnd_signal");
    ITEST_CHECK(mtx_unlock(&g_mutex) == thrd_success, "mtx_unlock by the producer");
  }
  return 42 + (int)(acc & 0);
}

static int holder(void* arg) {
  (void)arg;
  ITEST_CHECK(mtx_lock(&g_mutex) == thrd_success, "mtx_lock by the holder");
  struct timespec nap = {0, 100 * 1000 * 1000};
  ITEST_CHECK(thrd_sleep(&nap, NULL) == 0, "thrd_sleep");
  ITEST_CHECK(mtx_unlock(&g_mutex) == thrd_success, "mtx_unlock by the holder");
  thrd_exit(-7);
}

int main(int argc, char** argv) {
  g_items = itest_arg(argc, argv, 1, 3000);
  ITEST_CHECK(mtx_init(&g_mutex, mtx_timed) == thrd_success && cnd_init(&g_ready) == thrd_success, "init");

  /* A held mutex: busy to mtx_trylock, timed out for mtx_timedlock, then free once released. */
  thrd_t thread;
  ITEST_CHECK(thrd_create(&thread, holder, NULL) == thrd_success, "thrd_create holder");
  while (mtx_trylock(&g_mutex) == thrd_success) { /* until the holder has it */
    mtx_unlock(&g_mutex);
    thrd_yield();
  }
  ITEST_CHECK(mtx_trylock(&g_mutex) == thrd_busy, "mtx_trylock of a held mutex must be thrd_busy");
  struct timespec soon;
  timespec_get(&soon, TIME_UTC);
  soon.tv_nsec += 5 * 1000 * 1000;
  if (soon.tv_nsec >= 1000000000L) soon.tv_sec += 1, soon.tv_nsec -= 1000000000L;
  ITEST_CHECK(mtx_timedlock(&g_mutex, &soon) == thrd_timedout, "mtx_timedlock of a held mutex must time out");
  int result = 0;
  ITEST_CHECK(thrd_join(thread, &result) == thrd_success && result == -7, "thrd_exit(-7) joined as %d", result);

  ITEST_CHECK(thrd_create(&thread, producer, (void*)(uintptr_t)7) == thrd_success, "thrd_create producer");
  uint64_t acc = 3;
  for (long consumed = 0; consumed < g_items; ++consumed) {
    ITEST_CHECK(mtx_lock(&g_mutex) == thrd_success, "mtx_lock by main");
    while (g_produced <= consumed) ITEST_CHECK(cnd_wait(&g_ready, &g_mutex) == thrd_success, "cnd_wait");
    ITEST_CHECK(mtx_unlock(&g_mutex) == thrd_success, "mtx_unlock by main");
    WORK(acc, 20); /* @consume */
    COZ_PROGRESS_NAMED("item");
  }
  ITEST_CHECK(thrd_join(thread, &result) == thrd_success && result == 42, "the producer's result joined as %d", result);
  printf("c11 ok %llu\n", (unsigned long long)(acc & 1));
  return (int)itest_arg(argc, argv, 2, 0);
}
