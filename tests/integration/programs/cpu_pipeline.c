/* Three pipeline stages on three threads, meant for two CPUs (the test pins it), handing items over through rings of
   4 guarded by POSIX semaphores: stage 1 (700 us an item), the middle stage (@pipe-middle, 2 ms)
   and stage 3 (700 us, a progress point per item). The middle stage bounds the rate, and the CPUs
   are 85% busy, so speeding it up soon makes the program CPU bound: at 50% its items take
   (0.7 + 1 + 0.7) / 2 = 1.2 ms of the two CPUs, not the 1 ms the middle stage alone would allow.
   Usage: cpu_pipeline [items=400]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <whatif.h>

#include "itest.h"

#define RING 4
typedef struct {
  long slot[RING];
  int head, tail;
  sem_t free_slots, used_slots;
} ring_t;

static ring_t first, second;
static long items;

static void ring_init(ring_t* r) {
  r->head = r->tail = 0;
  ITEST_CHECK(sem_init(&r->free_slots, 0, RING) == 0 && sem_init(&r->used_slots, 0, 0) == 0, "sem_init");
}

static void ring_put(ring_t* r, long v) {
  while (sem_wait(&r->free_slots) != 0) ITEST_CHECK(errno == EINTR, "sem_wait");
  r->slot[r->tail] = v;
  r->tail = (r->tail + 1) % RING;
  sem_post(&r->used_slots);
}

static long ring_get(ring_t* r) {
  while (sem_wait(&r->used_slots) != 0) ITEST_CHECK(errno == EINTR, "sem_wait");
  long v = r->slot[r->head];
  r->head = (r->head + 1) % RING;
  sem_post(&r->free_slots);
  return v;
}

static void* stage1(void* unused) {
  (void)unused;
  uint64_t acc = 1;
  for (long i = 0; i < items; ++i) {
    WORK(acc, 700); /* @pipe-first */
    ring_put(&first, i);
  }
  return (void*)(uintptr_t)(acc & 1);
}

static void* middle(void* unused) {
  (void)unused;
  uint64_t acc = 1;
  for (long i = 0; i < items; ++i) {
    long v = ring_get(&first);
    WORK(acc, 2000); /* @pipe-middle */
    ring_put(&second, v);
  }
  return (void*)(uintptr_t)(acc & 1);
}

static long received;

static void* stage3(void* unused) {
  (void)unused;
  uint64_t acc = 1;
  for (long i = 0; i < items; ++i) {
    ITEST_CHECK(ring_get(&second) == i, "items out of order");
    WORK(acc, 700); /* @pipe-last */
    ++received;
    COZ_PROGRESS_NAMED("item");
  }
  return (void*)(uintptr_t)(acc & 1);
}

int main(int argc, char** argv) {
  items = itest_arg(argc, argv, 1, 400);
  ring_init(&first);
  ring_init(&second);
  pthread_t ids[3];
  void* (*stages[3])(void*) = {stage1, middle, stage3};
  for (int i = 0; i < 3; ++i) ITEST_CHECK(pthread_create(&ids[i], NULL, stages[i], NULL) == 0, "pthread_create");
  for (int i = 0; i < 3; ++i) pthread_join(ids[i], NULL);
  ITEST_CHECK(received == items, "lost items");
  printf("cpu_pipeline ok: %ld items\n", items);
  return 0;
}
