/* Shape: synchronous RPC over a loopback TCP socket. Two pthreads in one process: the main thread
 * is the client, a server pthread accepts one connection on 127.0.0.1 (ephemeral port); both ends
 * set TCP_NODELAY and use plain blocking send()/recv(). Per item the client builds a request
 * (line A, ~0.6 ms compute), sends it and blocks in recv() for the reply; the server blocks in
 * recv() for a request, computes the reply (line B, ~1 ms) and sends it back. Strictly serial
 * request/reply; one progress visit per reply received (client side).
 * Expected at s=60%: A 0.6 * 0.6 / 1.6 ~ 22%, B 0.6 * 1 / 1.6 ~ 37% (less the loopback round trip). */
#include "common.h"
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

struct msg {
  uint64_t seq;
  uint64_t value;
  uint64_t pad[6]; /* 64 bytes on the wire */
};

static int listen_fd;
static long a_iters, b_iters;

static void send_all(int fd, const void* buf, size_t len) {
  const char* p = buf;
  while (len > 0) {
    ssize_t k = send(fd, p, len, 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("send");
      exit(1);
    }
    p += k;
    len -= (size_t)k;
  }
}

/* 1 when the whole buffer arrived, 0 on orderly EOF before any byte */
static int recv_all(int fd, void* buf, size_t len) {
  char* p = buf;
  size_t got = 0;
  while (got < len) {
    ssize_t k = recv(fd, p + got, len - got, 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("recv");
      exit(1);
    }
    if (k == 0) {
      if (got == 0) return 0;
      fprintf(stderr, "short message\n");
      exit(1);
    }
    got += (size_t)k;
  }
  return 1;
}

static void set_nodelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) { perror("TCP_NODELAY"); exit(1); }
}

static void* server(void* arg) {
  (void)arg;
  int fd = accept(listen_fd, NULL, NULL);
  if (fd < 0) { perror("accept"); exit(1); }
  set_nodelay(fd);
  struct msg req, rep;
  memset(&rep, 0, sizeof rep);
  while (recv_all(fd, &req, sizeof req)) {
    SPIN(b_iters); // @line:B
    rep.seq = req.seq;
    rep.value = req.value * 31 + 7;
    send_all(fd, &rep, sizeof rep);
  }
  close(fd);
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 550;
  a_iters = ms_iters(0.6, scaleA);
  b_iters = ms_iters(1.0, scaleB);

  listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) { perror("socket"); return 1; }
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0; /* ephemeral */
  socklen_t alen = sizeof addr;
  if (bind(listen_fd, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(listen_fd, 1) != 0 ||
      getsockname(listen_fd, (struct sockaddr*)&addr, &alen) != 0) {
    perror("bind/listen");
    return 1;
  }

  uint64_t t0 = now_ns();
  pthread_t th;
  if (pthread_create(&th, NULL, server, NULL) != 0) { perror("pthread_create"); return 1; }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0) { perror("connect"); return 1; }
  set_nodelay(fd);

  struct msg req, rep;
  memset(&req, 0, sizeof req);
  uint64_t check = 0;
  for (long i = 0; i < n; i++) {
    SPIN(a_iters); // @line:A
    req.seq = (uint64_t)i;
    req.value = (uint64_t)i * 2654435761u;
    send_all(fd, &req, sizeof req);
    if (!recv_all(fd, &rep, sizeof rep)) { fprintf(stderr, "server closed early\n"); return 1; }
    if (rep.seq != (uint64_t)i) { fprintf(stderr, "reply out of order\n"); return 1; }
    check += rep.value;
    COZ_PROGRESS_NAMED("item");
  }
  shutdown(fd, SHUT_WR); /* the server sees EOF and exits */
  pthread_join(th, NULL);
  close(fd);
  close(listen_fd);
  printf("replies=%ld check=%llu\n", n, (unsigned long long)check);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
