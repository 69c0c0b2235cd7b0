/* Shape: 2-stage producer/consumer hand-off through a bounded ring of 4 slots, where both
 * threads block on a hand-written counting semaphore built directly on the futex syscall
 * (FUTEX_WAIT/FUTEX_WAKE, private), as language runtimes do, not on pthread primitives.
 * Line A: producer work (1 ms/item). Line B: consumer work (0.6 ms/item).
 * One progress visit per item consumed. */
#define _GNU_SOURCE
#include "common.h"
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
  atomic_int count;   /* the futex word: available tokens */
  atomic_int waiters; /* threads in (or about to enter) FUTEX_WAIT */
} fsem_t;

static long futex(atomic_int* addr, int op, int val) {
  return syscall(SYS_futex, (int*)addr, op, val, NULL, NULL, 0);
}

static void fsem_wait(fsem_t* s) {
  for (;;) {
    int c = atomic_load(&s->count);
    while (c > 0)
      if (atomic_compare_exchange_weak(&s->count, &c, c - 1)) return;
    atomic_fetch_add(&s->waiters, 1);
    futex(&s->count, FUTEX_WAIT_PRIVATE, 0); /* returns at once if count is no longer 0 */
    atomic_fetch_sub(&s->waiters, 1);
  }
}

static void fsem_post(fsem_t* s) {
  atomic_fetch_add(&s->count, 1);
  if (atomic_load(&s->waiters) > 0) futex(&s->count, FUTEX_WAKE_PRIVATE, 1);
}

#define CAP 4
static long ring[CAP];
static fsem_t slots_free = {CAP, 0}, slots_full = {0, 0};
static long n, a_iters, b_iters;

static void* producer(void* arg) {
  (void)arg;
  for (long i = 0; i < n; i++) {
    SPIN(a_iters); // @line:A
    fsem_wait(&slots_free);
    ring[i % CAP] = i;
    fsem_post(&slots_full);
  }
  return NULL;
}

static void* consumer(void* arg) {
  long sum = 0;
  for (long i = 0; i < n; i++) {
    fsem_wait(&slots_full);
    sum += ring[i % CAP];
    fsem_post(&slots_free);
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  *(long*)arg = sum;
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  n = n_items > 0 ? n_items : 800;
  a_iters = ms_iters(1.0, scaleA);
  b_iters = ms_iters(0.6, scaleB);
  long sum = 0;
  uint64_t t0 = now_ns();
  pthread_t p, c;
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, &sum);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  if (sum != n * (n - 1) / 2) { fprintf(stderr, "bad sum %ld\n", sum); return 1; }
  return 0;
}
