/* Threads hammering one synchronisation primitive, with a progress visit per operation. Each mode
   checks an invariant and exits 3 if it breaks; a deadlock shows as a test timeout.
   Usage: sync MODE [milliseconds=1000], MODE one of mutex cond barrier rwlock sem spin. */
#include <pthread.h>
#include <semaphore.h>
#include <whatif.h>

#include "itest.h"

enum { kThreads = 4, kQueue = 16 };

static uint64_t g_deadline;

static int time_up(void) { return itest_now_ns() >= g_deadline; }

/* ---- mutex: a shared counter against per-thread counts ---- */
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static long g_shared;
static void* mutex_worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  long mine = 0;
  while (!time_up()) {
    pthread_mutex_lock(&g_mutex);
    WORK(acc, 20); /* @hot-mutex */
    ++g_shared;
    pthread_mutex_unlock(&g_mutex);
    WORK(acc, 20);
    ++mine;
    COZ_PROGRESS_NAMED("op");
  }
  return (void*)mine;
}

/* ---- cond: a bounded queue, producers and consumers, sum of items checked ---- */
static pthread_cond_t g_not_empty = PTHREAD_COND_INITIALIZER, g_not_full = PTHREAD_COND_INITIALIZER;
static long g_queue[kQueue];
static int g_head, g_count, g_producers_left = kThreads / 2;
static long g_consumed_sum;
static void* producer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  long sum = 0;
  for (long item = 1; !time_up(); ++item) {
    WORK(acc, 20); /* @hot-cond */
    pthread_mutex_lock(&g_mutex);
    while (g_count == kQueue) pthread_cond_wait(&g_not_full, &g_mutex);
    g_queue[(g_head + g_count++) % kQueue] = item;
    pthread_cond_signal(&g_not_empty);
    pthread_mutex_unlock(&g_mutex);
    sum += item;
  }
  pthread_mutex_lock(&g_mutex);
  --g_producers_left;
  pthread_cond_broadcast(&g_not_empty);
  pthread_mutex_unlock(&g_mutex);
  return (void*)sum;
}
static void* consumer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (;;) {
    pthread_mutex_lock(&g_mutex);
    while (g_count == 0 && g_producers_left > 0) pthread_cond_wait(&g_not_empty, &g_mutex);
    if (g_count == 0) {
      pthread_mutex_unlock(&g_mutex);
      return NULL;
    }
    long item = g_queue[g_head];
    g_head = (g_head + 1) % kQueue;
    --g_count;
    g_consumed_sum += item;
    pthread_cond_signal(&g_not_full);
    pthread_mutex_unlock(&g_mutex);
    WORK(acc, 10);
    COZ_PROGRESS_NAMED("op");
  }
}

/* ---- barrier: every thread writes its round number, all must agree after the barrier ---- */
static pthread_barrier_t g_barrier;
static long g_slots[kThreads];
static volatile int g_barrier_stop;
static void* barrier_worker(void* arg) {
  long index = (long)arg;
  uint64_t acc = (uint64_t)index;
  for (long round = 0;; ++round) {
    WORK(acc, 30 + 10 * index); /* @hot-barrier */
    g_slots[index] = round;
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < kThreads; ++i) ITEST_CHECK(g_slots[i] == round, "slot %d is %ld in round %ld", i, g_slots[i], round);
    if (index == 0) {
      g_barrier_stop = time_up();
      COZ_PROGRESS_NAMED("op");
    }
    pthread_barrier_wait(&g_barrier);
    if (g_barrier_stop) return (void*)round;
    pthread_barrier_wait(&g_barrier); /* nobody rewrites a slot before all have checked the stop flag */
  }
}

/* ---- rwlock: writers keep a + b == 0, readers check it ---- */
static pthread_rwlock_t g_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static volatile long g_a, g_b;
static void* rw_worker(void* arg) {
  long index = (long)arg;
  uint64_t acc = (uint64_t)index;
  long ops = 0;
  while (!time_up()) {
    if (index == 0) {
      pthread_rwlock_wrlock(&g_rwlock);
      long delta = (long)(acc & 0xff) + 1;
      g_a += delta;
      WORK(acc, 10);
      g_b -= delta;
      pthread_rwlock_unlock(&g_rwlock);
    } else {
      pthread_rwlock_rdlock(&g_rwlock);
      long a = g_a;
      WORK(acc, 10); /* @hot-rwlock */
      long b = g_b;
      pthread_rwlock_unlock(&g_rwlock);
      ITEST_CHECK(a + b == 0, "reader saw a=%ld b=%ld", a, b);
    }
    WORK(acc, 10);
    ++ops;
    COZ_PROGRESS_NAMED("op");
  }
  return (void*)ops;
}

/* ---- sem: a ring handed over with two counting semaphores and a binary one ---- */
static sem_t g_slots_free, g_items, g_ring_lock;
static long g_ring[kQueue];
static int g_ring_in, g_ring_out;
static long g_ring_sum;
static volatile int g_sem_producers_done;
static void* sem_producer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  long sum = 0;
  for (long item = 1; !time_up(); ++item) {
    WORK(acc, 20); /* @hot-sem */
    sem_wait(&g_slots_free);
    sem_wait(&g_ring_lock);
    g_ring[g_ring_in] = item;
    g_ring_in = (g_ring_in + 1) % kQueue;
    sem_post(&g_ring_lock);
    sem_post(&g_items);
    sum += item;
  }
  return (void*)sum;
}
static void* sem_consumer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (;;) {
    sem_wait(&g_items);
    sem_wait(&g_ring_lock);
    long item = g_ring[g_ring_out];
    g_ring_out = (g_ring_out + 1) % kQueue;
    sem_post(&g_ring_lock);
    sem_post(&g_slots_free);
    if (item < 0) return NULL; /* poison pill */
    g_ring_sum += item;        /* one consumer only */
    WORK(acc, 10);
    COZ_PROGRESS_NAMED("op");
  }
}

int main(int argc, char** argv) {
  ITEST_CHECK(argc >= 2, "usage: sync MODE [milliseconds]");
  const char* mode = argv[1];
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 2, 1000) * 1000000ULL;
  pthread_t threads[kThreads];
  void* results[kThreads];
  if (strcmp(mode, "mutex") == 0) {
    for (long i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, mutex_worker, (void*)(i + 1));
    long total = 0;
    for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], &results[i]), total += (long)results[i];
    ITEST_CHECK(total == g_shared && total > 0, "mutex: %ld increments counted, %ld done", g_shared, total);
    printf("mutex ok %ld\n", total);
  } else if (strcmp(mode, "cond") == 0) {
    for (long i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, i < kThreads / 2 ? producer : consumer, (void*)(i + 1));
    long produced = 0;
    for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], &results[i]);
    for (int i = 0; i < kThreads / 2; ++i) produced += (long)results[i];
    ITEST_CHECK(produced == g_consumed_sum && produced > 0, "cond: produced %ld, consumed %ld", produced, g_consumed_sum);
    printf("cond ok %ld\n", produced);
  } else if (strcmp(mode, "barrier") == 0) {
    pthread_barrier_init(&g_barrier, NULL, kThreads);
    for (long i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, barrier_worker, (void*)i);
    for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], &results[i]);
    for (int i = 1; i < kThreads; ++i) ITEST_CHECK(results[i] == results[0], "barrier: rounds differ");
    printf("barrier ok %ld\n", (long)results[0]);
  } else if (strcmp(mode, "rwlock") == 0) {
    for (long i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, rw_worker, (void*)i);
    long ops = 0;
    for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], &results[i]), ops += (long)results[i];
    ITEST_CHECK(g_a + g_b == 0 && ops > 0, "rwlock: a=%ld b=%ld", g_a, g_b);
    printf("rwlock ok %ld\n", ops);
  } else if (strcmp(mode, "sem") == 0) {
    sem_init(&g_slots_free, 0, kQueue);
    sem_init(&g_items, 0, 0);
    sem_init(&g_ring_lock, 0, 1);
    pthread_t consumer_thread;
    pthread_create(&consumer_thread, NULL, sem_consumer, (void*)7);
    long produced = 0;
    for (long i = 0; i < kThreads - 1; ++i) pthread_create(&threads[i], NULL, sem_producer, (void*)(i + 1));
    for (int i = 0; i < kThreads - 1; ++i) pthread_join(threads[i], &results[i]), produced += (long)results[i];
    sem_wait(&g_slots_free); /* the poison pill */
    sem_wait(&g_ring_lock);
    g_ring[g_ring_in] = -1;
    g_ring_in = (g_ring_in + 1) % kQueue;
    sem_post(&g_ring_lock);
    sem_post(&g_items);
    pthread_join(consumer_thread, NULL);
    ITEST_CHECK(produced == g_ring_sum && produced > 0, "sem: produced %ld, consumed %ld", produced, g_ring_sum);
    printf("sem ok %ld\n", produced);
  } else {
    ITEST_CHECK(0, "unknown mode %s", mode);
  }
  return 0;
}
