/* evloop: an epoll event loop on the main thread reads an eventfd; a producer pthread does A (1 ms)
 * and then writes the eventfd; per event the loop does B (0.6 ms), counts progress and returns a
 * credit on a second eventfd; the producer blocks on it while 4 events are outstanding.
 * Producer-bound (1 ms an item). Expected at s=60%: A ~40% (the loop's 0.6 ms then sets the pace), B ~0%. */
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_OUTSTANDING 4

static int ev_fd, credit_fd;
static long total;

static void produce_one(void) {
  SPIN(ms_iters(1.0, scaleA)); // @line:A
}

static void handle_event(void) {
  SPIN(ms_iters(0.6, scaleB)); // @line:B
}

static void write_one(int fd) {
  uint64_t one = 1;
  while (write(fd, &one, sizeof one) != sizeof one) {
    if (errno != EINTR) { perror("write eventfd"); exit(1); }
  }
}

static uint64_t read_count(int fd) {
  uint64_t v;
  for (;;) {
    ssize_t r = read(fd, &v, sizeof v);
    if (r == sizeof v) return v;
    if (r < 0 && errno == EAGAIN) return 0;
    if (r < 0 && errno == EINTR) continue;
    perror("read eventfd");
    exit(1);
  }
}

static void* producer(void* arg) {
  (void)arg;
  long outstanding = 0;
  for (long i = 0; i < total; i++) {
    while (outstanding >= MAX_OUTSTANDING) outstanding -= (long)read_count(credit_fd); /* blocks */
    produce_one();
    write_one(ev_fd);
    outstanding++;
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  total = n_items > 0 ? n_items : 1000;
  ev_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  credit_fd = eventfd(0, EFD_CLOEXEC);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ev_fd < 0 || credit_fd < 0 || ep < 0) { perror("eventfd/epoll"); return 1; }
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = ev_fd};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, ev_fd, &ev) != 0) { perror("epoll_ctl"); return 1; }

  uint64_t t0 = now_ns();
  pthread_t th;
  pthread_create(&th, NULL, producer, NULL);
  long handled = 0;
  while (handled < total) {
    struct epoll_event out[4];
    int k = epoll_wait(ep, out, 4, -1);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("epoll_wait");
      return 1;
    }
    for (int e = 0; e < k; e++) {
      if (out[e].data.fd != ev_fd) continue;
      uint64_t events = read_count(ev_fd); /* all events signalled since the last read */
      for (uint64_t j = 0; j < events; j++) {
        handle_event();
        handled++;
        COZ_PROGRESS_NAMED("item");
        write_one(credit_fd);
      }
    }
  }
  pthread_join(th, NULL);
  printf("handled=%ld\n", handled);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  close(ep);
  close(ev_fd);
  close(credit_fd);
  return 0;
}
