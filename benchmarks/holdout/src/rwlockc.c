/* Shape: C pthread_rwlock_t with default attributes (glibc: PTHREAD_RWLOCK_PREFER_READER_NP, so a
 * waiting writer does not hold new readers back). 1 writer (the main thread): line B (0.6 ms)
 * under the write lock, then 0.6 ms outside it; one progress visit per writer iteration. 3 reader
 * threads: line A (0.4 ms) under the read lock, then 0.3 ms outside it, one iteration per version
 * the writer publishes: reader iteration k may start once the writer has released the write lock
 * k times (a mutex + condvar version counter, broadcast after each write unlock), so the readers
 * race the writer's next wrlock with their read sections but never run ahead by more than one
 * iteration, and every run does the same work (n writer and 3n reader iterations; free-running
 * readers would do a timing-dependent amount and, 3 of them on 2 CPUs, starved the writer: 20-30
 * ms a writer iteration on a loaded machine). Reader iterations do not count as items. 4 threads on 2 CPUs.
 * Ideal scheduling: 0.6 + 0.6 + 3 x (0.4 + 0.3) = 3.3 ms of work a round on 2 CPUs = 1.65 ms,
 * more than the writer's own loop (0.6 out + the readers' 3 x 0.4 on 2 CPUs alongside it, + 0.6
 * exclusive = ~1.5): CPU-bound. At s=60%: A 0.4 -> 0.16: 2.58 / 2 = 1.29 ms (~22%); B 0.6 -> 0.24:
 * 2.94 / 2 = 1.47 ms (~11%). Natively the exclusive section leaves the other CPU with only the
 * readers' 0.3 ms outside parts, so expect a little more than 1.65 and somewhat different shares. */
#include "common.h"
#include <pthread.h>

static pthread_rwlock_t rw;
static pthread_mutex_t vmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vcv = PTHREAD_COND_INITIALIZER;
static long version = 0; /* write-lock releases so far */
static long n, a_iters, r_out_iters;

static void* reader(void* arg) {
  (void)arg;
  for (long k = 0; k < n; k++) {
    pthread_mutex_lock(&vmu);
    while (version < k) pthread_cond_wait(&vcv, &vmu);
    pthread_mutex_unlock(&vmu);
    pthread_rwlock_rdlock(&rw);
    SPIN(a_iters); // @line:A
    pthread_rwlock_unlock(&rw);
    SPIN(r_out_iters);
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  n = n_items > 0 ? n_items : 800;
  a_iters = ms_iters(0.4, scaleA);
  r_out_iters = ms_iters(0.3, 1.0);
  const long b_iters = ms_iters(0.6, scaleB);
  const long w_out_iters = ms_iters(0.6, 1.0);
  if (pthread_rwlock_init(&rw, NULL) != 0) { perror("pthread_rwlock_init"); return 1; }
  uint64_t t0 = now_ns();
  pthread_t th[3];
  for (long i = 0; i < 3; i++)
    if (pthread_create(&th[i], NULL, reader, NULL) != 0) { perror("pthread_create"); return 1; }
  for (long i = 0; i < n; i++) {
    pthread_rwlock_wrlock(&rw);
    SPIN(b_iters); // @line:B
    pthread_rwlock_unlock(&rw);
    pthread_mutex_lock(&vmu);
    version++;
    pthread_cond_broadcast(&vcv);
    pthread_mutex_unlock(&vmu);
    SPIN(w_out_iters);
    COZ_PROGRESS_NAMED("item");
  }
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  pthread_rwlock_destroy(&rw);
  return 0;
}
