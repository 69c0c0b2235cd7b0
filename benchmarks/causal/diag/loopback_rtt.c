// Loopback TCP round trips: a server thread in epoll_wait + read + 10 mutex lock/unlock pairs + write,
// a client (main thread) in write + read; the per-request latency a server's path under whatif adds.
// Build: gcc -O2 -pthread loopback_rtt.c -o loopback_rtt; run: ./loopback_rtt [ROUND_TRIPS]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int listener;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void* serve(void* unused) {
  int connection = accept(listener, NULL, NULL);
  no_delay(connection);
  int poller = epoll_create1(0);
  struct epoll_event event = {.events = EPOLLIN, .data.fd = connection};
  epoll_ctl(poller, EPOLL_CTL_ADD, connection, &event);
  char buffer[64];
  for (;;) {
    struct epoll_event ready;
    if (epoll_wait(poller, &ready, 1, -1) < 1) continue;
    ssize_t n = read(connection, buffer, sizeof(buffer));
    if (n <= 0) break;
    for (int i = 0; i < 10; i++) {
      pthread_mutex_lock(&lock);
      pthread_mutex_unlock(&lock);
    }
    if (write(connection, buffer, (size_t)n) != n) break;
  }
  close(connection);
  close(poller);
  return unused;
}

int main(int argc, char** argv) {
  int trips = argc > 1 ? atoi(argv[1]) : 100000;
  listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof(address);
  if (bind(listener, (struct sockaddr*)&address, length) != 0 || listen(listener, 1) != 0) return 1;
  getsockname(listener, (struct sockaddr*)&address, &length);
  pthread_t server;
  pthread_create(&server, NULL, serve, NULL);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(client, (struct sockaddr*)&address, length) != 0) return 1;
  no_delay(client);
  char message[8] = "ping";
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < trips; i++) {
    if (write(client, message, sizeof(message)) != sizeof(message)) return 1;
    if (read(client, message, sizeof(message)) != sizeof(message)) return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
  printf("round trip %.2f us\n", ns / trips / 1e3);
  close(client);
  pthread_join(server, NULL);
  return 0;
}
