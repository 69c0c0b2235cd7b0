/* Pipe wake-ups: a producer thread computes each item (the line to speed up) and writes a byte to a
   pipe; the consumer waits in read(2) for it, then does a little work of its own. The consumer is
   woken by a thread of the program, so it is credited, not delayed. Usage: pipe_wake [items=3000]
   [wait=read|poll|epoll|eventfd]: poll and epoll wait for the pipe with poll(2) or epoll_wait(2)
   before the read, as event loops do; eventfd has the producer add 1 to an eventfd the consumer
   waits for with epoll_wait; tcp sends the bytes over a loopback TCP connection between the two
   threads instead of a pipe (a listener on any address, the producer connected to 127.0.0.1);
   nonblock tries each read with the pipe non-blocking, and when nothing is there yet makes it
   blocking with fcntl(F_SETFL) and reads again, as a program that switches modes does; readv
   writes and reads each byte with writev(2) and readv(2), as buffered event libraries do; stdio
   writes a line with fputs and fflush and reads it with fgets, and getc writes each byte with putc
   and fflush and reads it with getc_unlocked, whose inline form calls __uflow on an empty buffer:
   glibc's stdio reads and writes past the read and write shims.
   Exits non-zero if an item is lost. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static int g_pipe[2];
static int g_eventfd = -1; /* eventfd mode: the producer signals here instead */
static long g_items;
static int g_vectored; /* readv mode: writev and readv */
static FILE* g_stdio_out; /* stdio and getc modes: the pipe's streams */
static FILE* g_stdio_in;
static int g_lines;       /* stdio mode: lines (fputs/fgets), else bytes (putc/getc_unlocked) */

static void* producer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    WORK(acc, 200); /* @produce */
    if (g_eventfd >= 0) {
      uint64_t one = 1;
      ITEST_CHECK(write(g_eventfd, &one, sizeof one) == sizeof one, "write eventfd");
    } else if (g_stdio_out != NULL) {
      ITEST_CHECK((g_lines ? fputs("x\n", g_stdio_out) >= 0 : putc('x', g_stdio_out) == 'x') && fflush(g_stdio_out) == 0, "stdio write");
    } else if (g_vectored) {
      char byte = 'x';
      struct iovec vector = {.iov_base = &byte, .iov_len = 1};
      ITEST_CHECK(writev(g_pipe[1], &vector, 1) == 1, "writev");
    } else {
      ITEST_CHECK(write(g_pipe[1], "x", 1) == 1, "write");
    }
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_items = itest_arg(argc, argv, 1, 3000);
  const char* wait = argc > 2 ? argv[2] : "read";
  if (strcmp(wait, "tcp") == 0) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_ANY)}};
    socklen_t length = sizeof address;
    ITEST_CHECK(listener >= 0 && bind(listener, (struct sockaddr*)&address, sizeof address) == 0 && listen(listener, 1) == 0 &&
                    getsockname(listener, (struct sockaddr*)&address, &length) == 0, "listen");
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    g_pipe[1] = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ITEST_CHECK(g_pipe[1] >= 0 && setsockopt(g_pipe[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0 &&
                    connect(g_pipe[1], (struct sockaddr*)&address, sizeof address) == 0, "connect");
    g_pipe[0] = accept(listener, NULL, NULL);
    ITEST_CHECK(g_pipe[0] >= 0, "accept");
    close(listener);
  } else {
    ITEST_CHECK(pipe(g_pipe) == 0, "pipe");
  }
  int watched = g_pipe[0];
  if (strcmp(wait, "eventfd") == 0) watched = g_eventfd = eventfd(0, 0);
  g_vectored = strcmp(wait, "readv") == 0;
  if (strcmp(wait, "stdio") == 0 || strcmp(wait, "getc") == 0) {
    g_lines = strcmp(wait, "stdio") == 0;
    g_stdio_out = fdopen(g_pipe[1], "w");
    g_stdio_in = fdopen(g_pipe[0], "r");
    ITEST_CHECK(g_stdio_out != NULL && g_stdio_in != NULL, "fdopen");
  }
  int ep = -1;
  if (strcmp(wait, "epoll") == 0 || strcmp(wait, "eventfd") == 0) {
    ep = epoll_create1(0);
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = watched};
    ITEST_CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, watched, &interest) == 0, "epoll");
  }
  pthread_t thread;
  ITEST_CHECK(pthread_create(&thread, NULL, producer, (void*)(uintptr_t)7) == 0, "create");
  uint64_t acc = 3;
  for (long i = 0; i < g_items;) {
    if (ep >= 0) {
      struct epoll_event ready;
      ITEST_CHECK(epoll_wait(ep, &ready, 1, -1) == 1 && ready.data.fd == watched, "epoll_wait");
    } else if (strcmp(wait, "poll") == 0) {
      struct pollfd interest = {.fd = watched, .events = POLLIN};
      ITEST_CHECK(poll(&interest, 1, -1) == 1, "poll");
    }
    uint64_t count = 1;
    if (g_eventfd >= 0) {
      ITEST_CHECK(read(g_eventfd, &count, sizeof count) == sizeof count, "read eventfd");
    } else if (g_stdio_in != NULL && g_lines) {
      char line[8];
      ITEST_CHECK(fgets(line, sizeof line, g_stdio_in) != NULL && strcmp(line, "x\n") == 0, "fgets item %ld", i);
    } else if (g_stdio_in != NULL) {
      ITEST_CHECK(getc_unlocked(g_stdio_in) == 'x', "getc_unlocked item %ld", i);
    } else if (g_vectored) {
      char byte = 0;
      struct iovec vector = {.iov_base = &byte, .iov_len = 1};
      ITEST_CHECK(readv(g_pipe[0], &vector, 1) == 1 && byte == 'x', "readv item %ld", i);
    } else if (strcmp(wait, "nonblock") == 0) {
      char byte = 0;
      int flags = fcntl(g_pipe[0], F_GETFL);
      ITEST_CHECK(fcntl(g_pipe[0], F_SETFL, flags | O_NONBLOCK) == 0, "fcntl nonblocking");
      ssize_t got = read(g_pipe[0], &byte, 1);
      if (got < 0 && errno == EAGAIN) {
        ITEST_CHECK(fcntl(g_pipe[0], F_SETFL, flags & ~O_NONBLOCK) == 0, "fcntl blocking");
        got = read(g_pipe[0], &byte, 1);
      }
      ITEST_CHECK(got == 1 && byte == 'x', "read item %ld", i);
    } else {
      char byte = 0;
      ITEST_CHECK(read(g_pipe[0], &byte, 1) == 1 && byte == 'x', "read item %ld", i);
    }
    for (uint64_t k = 0; k < count; ++k, ++i) {
      WORK(acc, 10); /* @consume */
      COZ_PROGRESS_NAMED("item");
    }
  }
  void* result = NULL;
  pthread_join(thread, &result);
  printf("items=%ld sink=%llu\n", g_items, (unsigned long long)((acc ^ (uintptr_t)result) & 1));
  return 0;
}
