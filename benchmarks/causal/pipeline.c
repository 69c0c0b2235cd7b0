/* Known-answer workload: a two-stage pipeline over a bounded queue (mutex + condition variables).
   The producer runs line A per item, the consumer line B. Throughput = 1 / max(t_A, t_B): speeding
   the slower stage B by s gains until it matches A, (t_B - max(t_A, (1 - s) t_B)) / t_B; speeding
   the faster stage A gains nothing. */
#include <pthread.h>

#include "workload.h"

#define QUEUE_CAP 8

static double g_a, g_b;
static long g_items;
static uint64_t g_queue[QUEUE_CAP];
static int g_head, g_count;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_not_full = PTHREAD_COND_INITIALIZER;

static void* producer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    WORK(acc, g_a); /* @line:A */
    pthread_mutex_lock(&g_lock);
    while (g_count == QUEUE_CAP) pthread_cond_wait(&g_not_full, &g_lock);
    g_queue[(g_head + g_count) % QUEUE_CAP] = acc;
    ++g_count;
    pthread_cond_signal(&g_not_empty);
    pthread_mutex_unlock(&g_lock);
  }
  return NULL;
}

static void* consumer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    pthread_mutex_lock(&g_lock);
    while (g_count == 0) pthread_cond_wait(&g_not_empty, &g_lock);
    acc ^= g_queue[g_head];
    g_head = (g_head + 1) % QUEUE_CAP;
    --g_count;
    pthread_cond_signal(&g_not_full);
    pthread_mutex_unlock(&g_lock);
    WORK(acc, g_b); /* @line:B */
    COZ_PROGRESS_NAMED("item");
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 40);
  g_b = wl_arg(argc, argv, "b", 60);
  g_items = (long)wl_arg(argc, argv, "items", 33000);
  const uint64_t t0 = wl_now_ns();
  pthread_t tp, tc;
  void* rc;
  pthread_create(&tp, NULL, producer, (void*)(uintptr_t)1);
  pthread_create(&tc, NULL, consumer, (void*)(uintptr_t)2);
  pthread_join(tp, NULL);
  pthread_join(tc, &rc);
  wl_report(wl_now_ns() - t0, (uint64_t)g_items, 0, (uint64_t)(uintptr_t)rc);
  return 0;
}
