/* pollfd: two pthreads handing items over through eventfds waited on with poll(). The main thread
 * produces items (line B, 0.6 ms each) and signals each with a write to an eventfd; the worker
 * blocks in poll() on that eventfd, reads it (the count of items signalled since its last read)
 * and per item does line A (1 ms), visits the progress point and acks with a write to a second
 * eventfd. At most 2 items are outstanding: the main thread then blocks in poll() on the ack
 * eventfd and reads it. Both eventfds are non-blocking, so every wait is in poll().
 * Worker-bound: 1 ms an item (the main thread's 0.6 ms overlaps it on the other CPU).
 * Expected at s=60% (scale 0.4): A 40% (the worker's 0.4 ms then leaves the main thread's
 * 0.6 ms setting the pace), B ~0%. */
#include "common.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_OUTSTANDING 2

static int item_fd, ack_fd;
static long total;

static void write_one(int fd) {
  uint64_t one = 1;
  while (write(fd, &one, sizeof one) != sizeof one) {
    if (errno != EINTR) { perror("write eventfd"); exit(1); }
  }
}

/* Blocks in poll() until fd is readable, then returns its (non-zero) count. */
static uint64_t wait_count(int fd) {
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int k = poll(&p, 1, -1);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("poll");
      exit(1);
    }
    if (k == 0 || !(p.revents & POLLIN)) continue;
    uint64_t v;
    ssize_t r = read(fd, &v, sizeof v);
    if (r == sizeof v) return v;
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    perror("read eventfd");
    exit(1);
  }
}

static void* worker(void* arg) {
  (void)arg;
  const long a_iters = ms_iters(1.0, scaleA);
  long done = 0;
  while (done < total) {
    uint64_t c = wait_count(item_fd);
    for (uint64_t j = 0; j < c; j++) {
      SPIN(a_iters); // @line:A
      done++;
      COZ_PROGRESS_NAMED("item");
      write_one(ack_fd);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  total = n_items > 0 ? n_items : 900;
  const long b_iters = ms_iters(0.6, scaleB);
  item_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ack_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (item_fd < 0 || ack_fd < 0) { perror("eventfd"); return 1; }

  uint64_t t0 = now_ns();
  pthread_t th;
  if (pthread_create(&th, NULL, worker, NULL) != 0) { perror("pthread_create"); return 1; }
  long outstanding = 0;
  for (long i = 0; i < total; i++) {
    while (outstanding >= MAX_OUTSTANDING) outstanding -= (long)wait_count(ack_fd);
    SPIN(b_iters); // @line:B
    write_one(item_fd);
    outstanding++;
  }
  pthread_join(th, NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  close(item_fd);
  close(ack_fd);
  return 0;
}
