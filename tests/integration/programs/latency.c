/* Requests flow from a producer through a bounded queue to a consumer; COZ_BEGIN marks a request's
   arrival and COZ_END its completion, so several are always in flight. Prints the mean latency
   it measured itself, which Little's law applied to the profile should reproduce.
   Usage: latency [milliseconds=1200]. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

enum { kQueue = 8 };
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_changed = PTHREAD_COND_INITIALIZER;
static uint64_t g_queue[kQueue]; /* arrival times */
static uint64_t g_latency_sum;
static int g_head, g_count, g_done;
static uint64_t g_deadline;

static void* producer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  long produced = 0;
  while (itest_now_ns() < g_deadline) {
    WORK(acc, 50); /* @make-request */
    COZ_BEGIN("request");
    uint64_t arrival = itest_now_ns();
    pthread_mutex_lock(&g_mutex);
    while (g_count == kQueue) pthread_cond_wait(&g_changed, &g_mutex);
    g_queue[(g_head + g_count++) % kQueue] = arrival;
    ++produced;
    pthread_cond_broadcast(&g_changed);
    pthread_mutex_unlock(&g_mutex);
  }
  pthread_mutex_lock(&g_mutex);
  g_done = 1;
  pthread_cond_broadcast(&g_changed);
  pthread_mutex_unlock(&g_mutex);
  return (void*)produced;
}

static void* consumer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  long consumed = 0;
  for (;;) {
    pthread_mutex_lock(&g_mutex);
    while (g_count == 0 && !g_done) pthread_cond_wait(&g_changed, &g_mutex);
    if (g_count == 0) {
      pthread_mutex_unlock(&g_mutex);
      return (void*)consumed;
    }
    uint64_t arrival = g_queue[g_head];
    g_head = (g_head + 1) % kQueue;
    --g_count;
    pthread_cond_broadcast(&g_changed);
    pthread_mutex_unlock(&g_mutex);
    WORK(acc, 200); /* @serve-request */
    COZ_END("request");
    g_latency_sum += itest_now_ns() - arrival;
    ++consumed;
  }
}

int main(int argc, char** argv) {
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1200) * 1000000ULL;
  pthread_t p, c;
  void *produced, *consumed;
  pthread_create(&p, NULL, producer, (void*)1);
  pthread_create(&c, NULL, consumer, (void*)2);
  pthread_join(p, &produced);
  pthread_join(c, &consumed);
  ITEST_CHECK(produced == consumed && (long)produced > 0, "produced %ld, consumed %ld", (long)produced, (long)consumed);
  printf("requests=%ld mean_latency_ns=%.0f\n", (long)produced, (double)g_latency_sum / (double)(long)consumed);
  return 0;
}
