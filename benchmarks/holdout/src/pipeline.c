/* Shape 6: 3-stage pipeline, one thread per stage, connected by bounded ring buffers
 * (capacity 4) synchronised with POSIX semaphores. Stage costs: 0.5 ms (stage 1),
 * 2 ms (stage 2, line A), 1 ms (stage 3, line B). Progress in stage 3. */
#include "common.h"
#include <pthread.h>
#include <semaphore.h>

#define CAP 4
typedef struct {
  long slot[CAP];
  int head, tail;
  sem_t free_slots, used_slots;
} ring_t;

static ring_t r12, r23;
static long n;
static long s1_iters, a_iters, b_iters;

static void ring_init(ring_t* r) {
  r->head = r->tail = 0;
  sem_init(&r->free_slots, 0, CAP);
  sem_init(&r->used_slots, 0, 0);
}
static void ring_put(ring_t* r, long v) {
  sem_wait(&r->free_slots);
  r->slot[r->tail] = v;
  r->tail = (r->tail + 1) % CAP;
  sem_post(&r->used_slots);
}
static long ring_get(ring_t* r) {
  sem_wait(&r->used_slots);
  long v = r->slot[r->head];
  r->head = (r->head + 1) % CAP;
  sem_post(&r->free_slots);
  return v;
}

static void* stage1(void* arg) {
  (void)arg;
  for (long i = 0; i < n; i++) {
    SPIN(s1_iters);
    ring_put(&r12, i);
  }
  return NULL;
}
static void* stage2(void* arg) {
  (void)arg;
  for (long i = 0; i < n; i++) {
    long v = ring_get(&r12);
    SPIN(a_iters); // @line:A
    ring_put(&r23, v);
  }
  return NULL;
}
static void* stage3(void* arg) {
  (void)arg;
  for (long i = 0; i < n; i++) {
    (void)ring_get(&r23);
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  n = n_items > 0 ? n_items : 500;
  s1_iters = ms_iters(0.5, 1.0);
  a_iters = ms_iters(2.0, scaleA);
  b_iters = ms_iters(1.0, scaleB);
  ring_init(&r12);
  ring_init(&r23);
  uint64_t t0 = now_ns();
  pthread_t t[3];
  pthread_create(&t[0], NULL, stage1, NULL);
  pthread_create(&t[1], NULL, stage2, NULL);
  pthread_create(&t[2], NULL, stage3, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
