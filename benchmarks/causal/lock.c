/* Known-answer workload: lock contention. Two threads repeat: line A outside the lock, then line B
   inside one shared mutex, until `items` critical sections are done in total. With t_B > t_A the
   lock is the bottleneck: throughput = min(1 / t_B, 2 / (t_A + t_B)). Speeding B helps until the
   threads become the limit; speeding A helps nothing while t_B > t_A. */
#include <pthread.h>

#include "workload.h"

static double g_a, g_b;
static long g_items;
static long g_done;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (;;) {
    WORK(acc, g_a); /* @line:A */
    pthread_mutex_lock(&g_lock);
    if (g_done >= g_items) {
      pthread_mutex_unlock(&g_lock);
      break;
    }
    WORK(acc, g_b); /* @line:B */
    ++g_done;
    pthread_mutex_unlock(&g_lock);
    COZ_PROGRESS_NAMED("item");
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 30);
  g_b = wl_arg(argc, argv, "b", 70);
  g_items = (long)wl_arg(argc, argv, "items", 22000);
  const uint64_t t0 = wl_now_ns();
  pthread_t t[2];
  void* r[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, worker, (void*)(uintptr_t)(i + 1));
  for (int i = 0; i < 2; ++i) pthread_join(t[i], &r[i]);
  wl_report(wl_now_ns() - t0, (uint64_t)g_done, 0, (uint64_t)(uintptr_t)r[0] + (uint64_t)(uintptr_t)r[1]);
  return 0;
}
