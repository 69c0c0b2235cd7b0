/* Known-answer workload: a three-stage pipeline handing items over through POSIX semaphores
   (sem_wait/sem_post around two bounded rings of 8), fine grained (tens of microseconds per item).
   Stage 1 runs line A (WORK), stage 2 line B (FLOPS), stage 3 line C (WALK), one pthread each. Three
   busy threads share two CPUs, so the answer mixes the bottleneck stage and CPU contention: about
   max(t_B, (t_A + t_B + t_C) / 2) per item. */
#include <pthread.h>
#include <semaphore.h>

#include "workload.h"

#define RING 8
typedef struct {
  uint64_t items[RING];
  sem_t slots, filled;
  unsigned head, tail;
} Ring;

static Ring g_ab, g_bc;
static double g_a, g_b, g_c;
static long g_items;

static void ring_init(Ring* r) {
  sem_init(&r->slots, 0, RING);
  sem_init(&r->filled, 0, 0);
  r->head = r->tail = 0;
}
static void ring_put(Ring* r, uint64_t v) {
  while (sem_wait(&r->slots) != 0) {
  }
  r->items[r->tail++ % RING] = v;
  sem_post(&r->filled);
}
static uint64_t ring_get(Ring* r) {
  while (sem_wait(&r->filled) != 0) {
  }
  uint64_t v = r->items[r->head++ % RING];
  sem_post(&r->slots);
  return v;
}

static void* stage1(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    WORK(acc, g_a); /* @line:A */
    ring_put(&g_ab, acc);
  }
  return NULL;
}

static void* stage2(void* arg) {
  double x = 1.5 + (double)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    x += (double)(ring_get(&g_ab) & 7);
    FLOPS(x, g_b); /* @line:B */
    ring_put(&g_bc, (uint64_t)x);
  }
  return NULL;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 20);
  g_b = wl_arg(argc, argv, "b", 60);
  g_c = wl_arg(argc, argv, "c", 30);
  g_items = (long)wl_arg(argc, argv, "items", 16000);
  wl_ring_init();
  ring_init(&g_ab);
  ring_init(&g_bc);
  const uint64_t t0 = wl_now_ns();
  pthread_t t1, t2;
  pthread_create(&t1, NULL, stage1, (void*)1);
  pthread_create(&t2, NULL, stage2, (void*)2);
  uint32_t idx = 0;
  uint64_t sink = 0;
  for (long i = 0; i < g_items; ++i) {
    sink += ring_get(&g_bc);
    WALK(idx, g_c); /* @line:C */
    COZ_PROGRESS_NAMED("item");
  }
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  wl_report(wl_now_ns() - t0, (uint64_t)g_items, 0, sink + idx);
  return 0;
}
