/* Shape: C11 threads (<threads.h>: thrd_create, mtx_t, cnd_t), which glibc builds on its internal
 * pthread functions. One worker thread, created once. Per round main raises a generation under
 * the mutex and broadcasts; the worker runs line A (1 ms) and reports done (cnd_signal); main runs
 * line B (0.6 ms) meanwhile, then waits in cnd_wait for the worker's report. One progress visit per
 * round (main). 2 threads on 2 CPUs.
 * Expected at s=60%: A ~40% (the round is max(A, B): 1 -> 0.6 ms), B ~0%. */
#include "common.h"
#include <threads.h>

static mtx_t mu;
static cnd_t go, done;
static long generation, finished, rounds, a_iters;

static int worker(void* arg) {
  (void)arg;
  for (long r = 1; r <= rounds; r++) {
    mtx_lock(&mu);
    while (generation < r) cnd_wait(&go, &mu);
    mtx_unlock(&mu);
    SPIN(a_iters); // @line:A
    mtx_lock(&mu);
    finished = r;
    cnd_signal(&done);
    mtx_unlock(&mu);
  }
  return 0;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  rounds = n_items > 0 ? n_items : 1000;
  a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(0.6, scaleB);
  mtx_init(&mu, mtx_plain);
  cnd_init(&go);
  cnd_init(&done);
  uint64_t t0 = now_ns();
  thrd_t t;
  if (thrd_create(&t, worker, NULL) != thrd_success) return 1;
  for (long r = 1; r <= rounds; r++) {
    mtx_lock(&mu);
    generation = r;
    cnd_broadcast(&go);
    mtx_unlock(&mu);
    SPIN(b_iters); // @line:B
    mtx_lock(&mu);
    while (finished < r) cnd_wait(&done, &mu);
    mtx_unlock(&mu);
    COZ_PROGRESS_NAMED("item");
  }
  int result = 0;
  thrd_join(t, &result);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return result;
}
