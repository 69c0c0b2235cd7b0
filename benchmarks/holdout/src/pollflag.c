/* Two worker pthreads each compute a fixed half of the items, 1 ms each (line A), and count them
 * in a shared C11 atomic counter; nothing else connects them to the main thread, which polls the
 * counter in a usleep(200) loop and, for each newly completed item, does 0.3 ms of bookkeeping
 * (line B) and visits progress point `item`. No backpressure: the workers never wait.
 * 3 threads on 2 CPUs, 1.3 ms of work an item: CPU-bound at 0.65 ms an item (main sleeps between
 * polls when it has caught up). s=60%: A (0.4 + 0.3) / 2 = 0.35 (~46%); B (1 + 0.12) / 2 = 0.56
 * (~14%). The last item waits up to one poll period (~0.25 ms) once per run. */
#include "common.h"
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_long completed;
static long per_worker, a_iters, b_iters;

static void* worker(void* arg) {
  (void)arg;
  for (long i = 0; i < per_worker; i++) {
    SPIN(a_iters); // @line:A
    atomic_fetch_add_explicit(&completed, 1, memory_order_release);
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  long n = n_items > 0 ? n_items : 1700;
  per_worker = (n + 1) / 2;
  const long total = 2 * per_worker;
  a_iters = ms_iters(1.0, scaleA);
  b_iters = ms_iters(0.3, scaleB);
  uint64_t t0 = now_ns();
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);

  long handled = 0;
  while (handled < total) {
    long done = atomic_load_explicit(&completed, memory_order_acquire);
    if (done == handled) {
      usleep(200);
      continue;
    }
    for (; handled < done; handled++) {
      SPIN(b_iters); // @line:B
      COZ_PROGRESS_NAMED("item");
    }
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
