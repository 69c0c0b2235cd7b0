/* Shape: one marked line reached from two callers, only one of them on the critical path. Line A
 * is inside a noinline helper work(iters). Thread 1 (the item loop) calls work() for 0.6 ms, then
 * runs line B (0.6 ms) itself, then hands one unit to thread 2 (pending++ under a mutex, condvar
 * signal; it never waits for thread 2) and visits `item`. Thread 2 waits on the condvar while
 * nothing is pending and calls the same work() for 0.3 ms a unit: half as busy as thread 1, on
 * the other CPU, so it never limits progress (the run ends when it has drained the last unit, at
 * most 0.3 ms after thread 1). 2 busy threads on 2 CPUs.
 * Thread 1 alone sets the pace: 1.2 ms an item. At s=60%: A 0.6 -> 0.24 in thread 1 (thread 2's
 * calls get faster too, which changes nothing): 0.84 ms (30%); B likewise 30%.
 * Natively ~1.6 ms an item (SPIN's ms are ~1.35 real ms). */
#include "common.h"
#include <pthread.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long pending = 0;
static int done = 0;
static long bg_iters;
static long bg_units = 0;

__attribute__((noinline)) static void work(long iters) {
  SPIN(iters); // @line:A
  __asm__ volatile("" ::: "memory");  /* keep the call a call (no tail merge into the caller) */
}

static void* background(void* arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&mu);
    while (pending == 0 && !done) pthread_cond_wait(&cv, &mu);
    if (pending == 0 && done) { pthread_mutex_unlock(&mu); break; }
    pending--;
    pthread_mutex_unlock(&mu);
    work(bg_iters);
    bg_units++;
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 1100;
  const long a_iters = ms_iters(0.6, scaleA);
  bg_iters = ms_iters(0.3, scaleA);
  const long b_iters = ms_iters(0.6, scaleB);
  uint64_t t0 = now_ns();
  pthread_t bg;
  if (pthread_create(&bg, NULL, background, NULL) != 0) { perror("pthread_create"); return 1; }
  for (long i = 0; i < n; i++) {
    work(a_iters);
    SPIN(b_iters); // @line:B
    pthread_mutex_lock(&mu);
    pending++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    COZ_PROGRESS_NAMED("item");
  }
  pthread_mutex_lock(&mu);
  done = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
  pthread_join(bg, NULL);
  if (bg_units != n) { fprintf(stderr, "twocallers: background did %ld of %ld units\n", bg_units, n); return 1; }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
