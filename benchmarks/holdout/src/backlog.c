// backlog: a producer-bound pipeline whose queue has no practical bound. The producer thread
// computes each item (line A, 2 ms) and write()s an 8-byte record to a pipe (64 KiB: 8192
// records, more than a run makes); the main thread read()s each record and computes on it (line
// B, 1.4 ms), then visits progress. The consumer waits for the producer: 2 ms an item.
// Expected at s=60%: A ~30% (0.8 ms producer, then the 1.4 ms consumer sets the pace), B ~0%.
// Hard for an experiment-based profiler: a sped-up experiment leaves a backlog of records that
// the baseline experiments after it drain at the consumer's pace, not the producer's.
#include "common.h"
#include <pthread.h>
#include <unistd.h>

static int fds[2];
static long n;

static void* producer(void* arg) {
  (void)arg;
  for (long i = 0; i < n; i++) {
    SPIN(ms_iters(2.0, scaleA)); // @line:A
    if (write(fds[1], &i, sizeof i) != sizeof i) abort();
  }
  close(fds[1]);
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  n = n_items > 0 ? n_items : 500;
  if (pipe(fds) != 0) return 1;
  uint64_t t0 = now_ns();
  pthread_t t;
  pthread_create(&t, NULL, producer, NULL);
  long v, got = 0;
  while (read(fds[0], &v, sizeof v) == sizeof v) {
    SPIN(ms_iters(1.4, scaleB)); // @line:B
    got++;
    COZ_PROGRESS_NAMED("item");
  }
  pthread_join(t, NULL);
  printf("items=%ld\n", got);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
