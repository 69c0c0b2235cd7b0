/* A 3-stage pipeline, one pthread a stage, handing items over in batches of 4 through two bounded
 * queues of capacity 2 batches, each guarded by a pthread_mutex with not_full / not_empty
 * pthread_conds. Stage 1 makes each item in 0.4 ms, stage 2 works 1.2 ms on it (line A), stage 3
 * 0.8 ms (line B) and visits progress point `item` per item.
 * 3 threads on 2 CPUs, 2.4 ms of work an item: stage 2 (1.2 ms) and the CPUs (2.4 / 2 = 1.2 ms)
 * are both the limit. Ideal: s=60% A -> max(0.48, 0.8, 1.68 / 2) = 0.84 (~30%); B -> stage 2
 * still 1.2 (~0%). Under fair sharing stage 2 gets less than a whole CPU while all three run, so
 * natively an item takes longer than 1.2 ms and B can free CPU time for stage 2 (B > 0). */
#include "common.h"
#include <pthread.h>

#define BATCH 4
#define QCAP 2

struct queue {
  pthread_mutex_t mu;
  pthread_cond_t not_full, not_empty;
  long slots[QCAP][BATCH];
  int head, count;
};

static struct queue q12 = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0}}, 0, 0};
static struct queue q23 = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0}}, 0, 0};
static long n_batches, s1_iters, a_iters, b_iters;
static long checksum;

static void push(struct queue* q, const long* batch) {
  pthread_mutex_lock(&q->mu);
  while (q->count == QCAP) pthread_cond_wait(&q->not_full, &q->mu);
  memcpy(q->slots[(q->head + q->count) % QCAP], batch, sizeof(long) * BATCH);
  q->count++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
}

static void pop(struct queue* q, long* batch) {
  pthread_mutex_lock(&q->mu);
  while (q->count == 0) pthread_cond_wait(&q->not_empty, &q->mu);
  memcpy(batch, q->slots[q->head], sizeof(long) * BATCH);
  q->head = (q->head + 1) % QCAP;
  q->count--;
  pthread_cond_signal(&q->not_full);
  pthread_mutex_unlock(&q->mu);
}

static void* stage1(void* arg) {
  (void)arg;
  long batch[BATCH];
  for (long b = 0; b < n_batches; b++) {
    for (int i = 0; i < BATCH; i++) {
      SPIN(s1_iters);
      batch[i] = b * BATCH + i;
    }
    push(&q12, batch);
  }
  return NULL;
}

static void* stage2(void* arg) {
  (void)arg;
  long batch[BATCH];
  for (long b = 0; b < n_batches; b++) {
    pop(&q12, batch);
    for (int i = 0; i < BATCH; i++) {
      SPIN(a_iters); // @line:A
      batch[i] += 1;
    }
    push(&q23, batch);
  }
  return NULL;
}

static void* stage3(void* arg) {
  (void)arg;
  long batch[BATCH];
  for (long b = 0; b < n_batches; b++) {
    pop(&q23, batch);
    for (int i = 0; i < BATCH; i++) {
      SPIN(b_iters); // @line:B
      checksum += batch[i];
      COZ_PROGRESS_NAMED("item");
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  long n = n_items > 0 ? n_items : 880;
  n_batches = (n + BATCH - 1) / BATCH;
  s1_iters = ms_iters(0.4, 1.0);
  a_iters = ms_iters(1.2, scaleA);
  b_iters = ms_iters(0.8, scaleB);
  uint64_t t0 = now_ns();
  pthread_t t[3];
  pthread_create(&t[0], NULL, stage1, NULL);
  pthread_create(&t[1], NULL, stage2, NULL);
  pthread_create(&t[2], NULL, stage3, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  long items = n_batches * BATCH;
  if (checksum != items * (items + 1) / 2) { fprintf(stderr, "bad checksum\n"); return 1; }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
