/* A thread pool that outnumbers the CPUs only while it works: per round main hands `tasks` tasks
   (WORK 300 each, line pool-task) to `workers` pthreads through a mutex and two condition
   variables, waits until all are done, then runs a serial line alone (WORK 500, line pool-serial)
   while the workers sleep, and visits a progress point. The program times its own serial line and
   rounds, and prints the serial line's share of the run: speeding that line by s really saves
   s times its share (nothing else runs meanwhile).
   Usage: pool_serial [rounds=600] [workers=2 x CPUs] [tasks=6]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <whatif.h>

#include "itest.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t work_done = PTHREAD_COND_INITIALIZER;
static long queued, unfinished;
static int stopping;

static void* worker(void* unused) {
  (void)unused;
  uint64_t acc = 1;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (queued == 0 && !stopping) pthread_cond_wait(&work_ready, &lock);
    if (queued == 0 && stopping) break;
    --queued;
    pthread_mutex_unlock(&lock);
    WORK(acc, 300); /* @pool-task */
    pthread_mutex_lock(&lock);
    if (--unfinished == 0) pthread_cond_signal(&work_done);
  }
  pthread_mutex_unlock(&lock);
  return (void*)(uintptr_t)(acc & 1);
}

int main(int argc, char** argv) {
  cpu_set_t cpus;
  long usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  long rounds = itest_arg(argc, argv, 1, 600);
  int workers = (int)itest_arg(argc, argv, 2, 2 * usable);
  long tasks = itest_arg(argc, argv, 3, 6);
  ITEST_CHECK(rounds > 0 && workers > 0 && workers <= 64 && tasks > 0, "usage: pool_serial [rounds] [workers<=64] [tasks]");
  pthread_t ids[64];
  for (int i = 0; i < workers; ++i) ITEST_CHECK(pthread_create(&ids[i], NULL, worker, NULL) == 0, "pthread_create");
  uint64_t acc = 1, serial_ns = 0, start = itest_now_ns();
  for (long round = 0; round < rounds; ++round) {
    pthread_mutex_lock(&lock);
    queued = unfinished = tasks;
    pthread_cond_broadcast(&work_ready);
    while (unfinished > 0) pthread_cond_wait(&work_done, &lock);
    pthread_mutex_unlock(&lock);
    uint64_t before = itest_now_ns();
    WORK(acc, 500); /* @pool-serial */
    serial_ns += itest_now_ns() - before;
    COZ_PROGRESS_NAMED("round");
  }
  uint64_t total = itest_now_ns() - start;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_broadcast(&work_ready);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < workers; ++i) pthread_join(ids[i], NULL);
  printf("pool_serial ok: %ld rounds, serial share %.4f (acc %d)\n", rounds, (double)serial_ns / (double)total,
         (int)(acc & 1));
  return 0;
}
