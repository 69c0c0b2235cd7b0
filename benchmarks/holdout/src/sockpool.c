/* Shape: request/reply over Unix-domain stream sockets to a pool of 2 server threads. One client
 * thread, two socketpair(AF_UNIX, SOCK_STREAM) connections, one per server thread, used round-robin
 * with blocking read/write of 8-byte messages. Each server computes line A (0.8 ms) per request
 * and writes the reply; the client reads the replies in order (server 0, 1, 0, 1, ...), computes
 * line B (0.3 ms) per reply, then sends that server its next request: at most 2 requests
 * outstanding, one per server. One progress visit per reply processed. 3 threads on 2 CPUs.
 * Ideal scheduling: each server's chain is A + B = 1.1 ms for every other item, and the CPUs do
 * 0.8 + 0.3 = 1.1 ms of work an item on 2 CPUs: both give 0.55 ms an item (the schedule packs
 * exactly). At s=60%: A 0.8 -> 0.32: max(chain 0.62 / 2, client 0.3, CPU 0.62 / 2) = 0.31 ms (~44%);
 * B 0.3 -> 0.12: max(0.92 / 2, 0.12, 0.92 / 2) = 0.46 ms (~16%).
 * Natively more: SPIN's ms are ~1.35 real ms and each round trip adds two socket wake-ups. */
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

static long a_iters;

static int read_full(int fd, void* buf, size_t len) {
  char* p = buf;
  while (len > 0) {
    ssize_t r = read(fd, p, len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    len -= (size_t)r;
  }
  return 0;
}

static int write_full(int fd, const void* buf, size_t len) {
  const char* p = buf;
  while (len > 0) {
    ssize_t r = write(fd, p, len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    len -= (size_t)r;
  }
  return 0;
}

static void* server(void* arg) {
  const int fd = (int)(long)arg;
  long req;
  while (read_full(fd, &req, sizeof req) == 0 && req >= 0) {
    SPIN(a_iters); // @line:A
    long reply = req * 2 + 1;
    if (write_full(fd, &reply, sizeof reply) != 0) { perror("server write"); exit(1); }
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 2000;
  a_iters = ms_iters(0.8, scaleA);
  const long b_iters = ms_iters(0.3, scaleB);
  int sv[2][2];  /* sv[s][0]: client end, sv[s][1]: server s's end */
  for (int s = 0; s < 2; s++)
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[s]) != 0) { perror("socketpair"); return 1; }
  uint64_t t0 = now_ns();
  pthread_t th[2];
  for (int s = 0; s < 2; s++)
    if (pthread_create(&th[s], NULL, server, (void*)(long)sv[s][1]) != 0) { perror("pthread_create"); return 1; }
  /* request i goes to server i % 2 */
  for (long i = 0; i < 2 && i < n; i++)
    if (write_full(sv[i % 2][0], &i, sizeof i) != 0) { perror("client write"); return 1; }
  for (long i = 0; i < n; i++) {
    const int fd = sv[i % 2][0];
    long reply;
    if (read_full(fd, &reply, sizeof reply) != 0) { fprintf(stderr, "sockpool: short read\n"); return 1; }
    if (reply != i * 2 + 1) { fprintf(stderr, "sockpool: reply %ld for request %ld\n", reply, i); return 1; }
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
    const long next = i + 2;
    if (next < n && write_full(fd, &next, sizeof next) != 0) { perror("client write"); return 1; }
  }
  for (int s = 0; s < 2; s++) {
    long stop = -1;
    if (write_full(sv[s][0], &stop, sizeof stop) != 0) { perror("client write"); return 1; }
  }
  for (int s = 0; s < 2; s++) pthread_join(th[s], NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  for (int s = 0; s < 2; s++) { close(sv[s][0]); close(sv[s][1]); }
  return 0;
}
