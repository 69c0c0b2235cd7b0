/* An open-loop server: a generator issues a burst of 4 requests (COZ_BEGIN each), then sleeps 6 ms;
   a server thread serves them in order (COZ_END each), so the requests in flight rise and fall in
   6-ms steps. Prints the mean latency it measured itself, which Little's law applied to the profile
   must reproduce: read in step with the bursts, the in-flight average came out 25-36% high.
   Usage: bursts [milliseconds=1500] [work units per request=600]. */
#include <pthread.h>
#include <time.h>
#include <whatif.h>

#include "itest.h"

enum { kMaxRequests = 1 << 16, kBurst = 4 };
static uint64_t g_arrival[kMaxRequests];
static long g_issued, g_units;
static int g_done;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ready = PTHREAD_COND_INITIALIZER;

static void* server(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  static double mean;
  double total = 0;
  long served = 0;
  for (;;) {
    pthread_mutex_lock(&g_lock);
    while (g_issued <= served && !g_done) pthread_cond_wait(&g_ready, &g_lock);
    if (g_issued <= served) {
      pthread_mutex_unlock(&g_lock);
      break;
    }
    const uint64_t arrived = g_arrival[served];
    pthread_mutex_unlock(&g_lock);
    WORK(acc, g_units); /* @serve */
    COZ_END("request");
    total += (double)(itest_now_ns() - arrived);
    ++served;
  }
  mean = served > 0 ? total / (double)served : 0;
  return &mean;
}

int main(int argc, char** argv) {
  const uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1500) * 1000000ULL;
  g_units = itest_arg(argc, argv, 2, 600);
  pthread_t thread;
  pthread_create(&thread, NULL, server, (void*)(uintptr_t)1);
  while (itest_now_ns() < deadline && g_issued + kBurst <= kMaxRequests) {
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < kBurst; ++k) {
      COZ_BEGIN("request");
      g_arrival[g_issued++] = itest_now_ns();
    }
    pthread_cond_signal(&g_ready);
    pthread_mutex_unlock(&g_lock);
    struct timespec gap = {0, 6000000};
    nanosleep(&gap, NULL);
  }
  pthread_mutex_lock(&g_lock);
  g_done = 1;
  pthread_cond_signal(&g_ready);
  pthread_mutex_unlock(&g_lock);
  void* mean;
  pthread_join(thread, &mean);
  printf("requests=%ld mean_latency_ns=%.0f\n", g_issued, *(double*)mean);
  return 0;
}
