/* Known-answer workload: request latency with COZ_BEGIN/COZ_END. A generator thread issues bursts of
   `burst` requests, then sleeps `gap_us` (open loop, relative sleep); a server thread handles them in
   order, running line A then line B per request. Throughput is fixed by the generator, so the answer
   is in latency: a request waits for those ahead of it in its burst, so mean latency is proportional
   to the service time t_A + t_B and speeding A by s cuts it by s * t_A / (t_A + t_B). The server
   must keep up (Little's law holds only for a stable queue): a burst's service, 4 x 800 us, takes
   about 55% of the 6 ms gap, with room for slower CPUs and the profilers' overhead. */
#include <pthread.h>

#include "workload.h"

#define MAX_REQ 65536

static double g_a, g_b;
static long g_requests;
static uint64_t g_arrival[MAX_REQ];
static long g_issued;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ready = PTHREAD_COND_INITIALIZER;

static void* server(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  double total_latency = 0;
  for (long i = 0; i < g_requests; ++i) {
    pthread_mutex_lock(&g_lock);
    while (g_issued <= i) pthread_cond_wait(&g_ready, &g_lock);
    const uint64_t arrived = g_arrival[i];
    pthread_mutex_unlock(&g_lock);
    WORK(acc, g_a); /* @line:A */
    WORK(acc, g_b); /* @line:B */
    COZ_END("request");
    total_latency += (double)(wl_now_ns() - arrived);
  }
  static double mean;
  mean = total_latency / (double)g_requests;
  return &mean;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 300);
  g_b = wl_arg(argc, argv, "b", 500);
  const long burst = (long)wl_arg(argc, argv, "burst", 4);
  const double gap_us = wl_arg(argc, argv, "gap_us", 6000);
  g_requests = (long)wl_arg(argc, argv, "requests", 1400);
  if (g_requests > MAX_REQ) g_requests = MAX_REQ;
  const uint64_t t0 = wl_now_ns();
  pthread_t ts;
  void* mean;
  pthread_create(&ts, NULL, server, (void*)(uintptr_t)1);
  for (long i = 0; i < g_requests;) {
    pthread_mutex_lock(&g_lock);
    for (long k = 0; k < burst && i < g_requests; ++k, ++i) {
      COZ_BEGIN("request");
      g_arrival[i] = wl_now_ns();
      ++g_issued;
    }
    pthread_cond_signal(&g_ready);
    pthread_mutex_unlock(&g_lock);
    wl_sleep_us(gap_us);
  }
  pthread_join(ts, &mean);
  wl_report(wl_now_ns() - t0, (uint64_t)g_requests, *(double*)mean, 0);
  return 0;
}
