// stdiopipe: two pthreads over two pipes through stdio: the producer fprintf+fflush'es a line per
// item (line A, 1 ms of work first) and keeps at most 3 outstanding, reading acks with fgets; the
// consumer fgets each item, works on it (line B, 0.6 ms) and fprintf+fflush'es an ack. glibc's stdio
// reads and writes through its internal __read/__write. Producer-bound: 1 ms an item.
// Expected at s=60%: A ~40% (0.4 ms producer, then the 0.6 ms consumer sets the pace), B ~0%.
#include "common.h"
#include <pthread.h>
#include <unistd.h>

#define MAX_OUTSTANDING 3
static FILE *req_rd, *req_wr, *ack_rd, *ack_wr;

static void* consumer(void* arg) {
  (void)arg;
  char line[64];
  while (fgets(line, sizeof line, req_rd)) {
    SPIN(ms_iters(0.6, scaleB)); // @line:B
    fprintf(ack_wr, "%ld\n", atol(line));
    fflush(ack_wr);
  }
  fclose(ack_wr);
  return NULL;
}

static void read_ack(void) {
  char line[64];
  if (!fgets(line, sizeof line, ack_rd)) { fprintf(stderr, "ack pipe closed early\n"); exit(1); }
  COZ_PROGRESS_NAMED("item");
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 900;
  int req[2], ack[2];
  if (pipe(req) != 0 || pipe(ack) != 0) { perror("pipe"); return 1; }
  req_rd = fdopen(req[0], "r");
  req_wr = fdopen(req[1], "w");
  ack_rd = fdopen(ack[0], "r");
  ack_wr = fdopen(ack[1], "w");
  uint64_t t0 = now_ns();
  pthread_t t;
  pthread_create(&t, NULL, consumer, NULL);
  long outstanding = 0;
  for (long i = 0; i < n; i++) {
    SPIN(ms_iters(1.0, scaleA)); // @line:A
    fprintf(req_wr, "%ld\n", i);
    fflush(req_wr);
    if (++outstanding == MAX_OUTSTANDING) {
      read_ack();
      outstanding--;
    }
  }
  fclose(req_wr);
  while (outstanding-- > 0) read_ack();
  pthread_join(t, NULL);
  fclose(req_rd);
  fclose(ack_rd);
  printf("items=%ld\n", n);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
