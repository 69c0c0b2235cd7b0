/* A single-threaded epoll event-loop server (the main thread) serving 3 client pthreads, one
 * AF_UNIX SOCK_STREAM socketpair each. A client writes an 8-byte request, blocks in read() for the
 * reply, then does its own local work (line B, 0.6 ms) and repeats. The server, woken by
 * epoll_wait, reads each ready request, does 0.3 ms of work for it (line A) and writes the reply;
 * one progress visit per reply. It stops when all 3 clients have closed their ends.
 * 4 threads on 2 CPUs, closed loop with 3 requests in flight: 0.9 ms of work a request, CPU-bound
 * at 0.45 ms a reply (server busy 2/3 of the time). s=60%: A 0.72 ms of work -> 0.36 (~20%);
 * B 0.54 -> 0.27 on the CPUs but the server needs 0.3 a reply -> 0.3 (~33%). */
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define NCLIENTS 3

static long per_client, a_iters, b_iters;

static void write_full(int fd, const void* buf, size_t len) {
  const char* p = buf;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) { perror("write"); exit(1); }
    p += w;
    len -= (size_t)w;
  }
}

/* Reads exactly len bytes; returns 0 at end of file before any byte. */
static int read_full(int fd, void* buf, size_t len) {
  char* p = buf;
  size_t got = 0;
  while (got < len) {
    ssize_t r = read(fd, p + got, len - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) { perror("read"); exit(1); }
    if (r == 0) {
      if (got == 0) return 0;
      fprintf(stderr, "short read\n");
      exit(1);
    }
    got += (size_t)r;
  }
  return 1;
}

static void* client(void* arg) {
  int fd = (int)(intptr_t)arg;
  for (long i = 0; i < per_client; i++) {
    uint64_t req = (uint64_t)i, rep;
    write_full(fd, &req, sizeof req);
    if (!read_full(fd, &rep, sizeof rep)) { fprintf(stderr, "server closed\n"); exit(1); }
    if (rep != req + 1) { fprintf(stderr, "bad reply\n"); exit(1); }
    SPIN(b_iters); // @line:B
  }
  close(fd);
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  long n = n_items > 0 ? n_items : 1800;
  per_client = (n + NCLIENTS - 1) / NCLIENTS;
  a_iters = ms_iters(0.3, scaleA);
  b_iters = ms_iters(0.6, scaleB);

  int srv_fd[NCLIENTS];
  pthread_t th[NCLIENTS];
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) { perror("epoll_create1"); return 1; }
  uint64_t t0 = now_ns();
  for (int c = 0; c < NCLIENTS; c++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) { perror("socketpair"); return 1; }
    srv_fd[c] = sv[0];
    struct epoll_event ev = {.events = EPOLLIN, .data = {.u32 = (uint32_t)c}};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev) != 0) { perror("epoll_ctl"); return 1; }
    pthread_create(&th[c], NULL, client, (void*)(intptr_t)sv[1]);
  }

  int open_clients = NCLIENTS;
  long replies = 0;
  while (open_clients > 0) {
    struct epoll_event evs[NCLIENTS];
    int k = epoll_wait(ep, evs, NCLIENTS, -1);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("epoll_wait");
      return 1;
    }
    for (int e = 0; e < k; e++) {
      int c = (int)evs[e].data.u32;
      uint64_t req;
      if (!read_full(srv_fd[c], &req, sizeof req)) {
        epoll_ctl(ep, EPOLL_CTL_DEL, srv_fd[c], NULL);
        close(srv_fd[c]);
        open_clients--;
        continue;
      }
      SPIN(a_iters); // @line:A
      uint64_t rep = req + 1;
      write_full(srv_fd[c], &rep, sizeof rep);
      replies++;
      COZ_PROGRESS_NAMED("item");
    }
  }
  for (int c = 0; c < NCLIENTS; c++) pthread_join(th[c], NULL);
  close(ep);
  if (replies != per_client * NCLIENTS) { fprintf(stderr, "replies %ld != %ld\n", replies, per_client * NCLIENTS); return 1; }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
