/* A request/response pair, as a server's threads run: the main thread prepares a request (~30 us,
   line `client`), hands it to the `server` thread through a pipe and waits for its answer; the
   server does ~20 us of work (line `request`) per request. Both threads block and wake thousands of
   times per second of their CPU time: while one works the other waits in read(2), however the
   scheduler places them. A third thread computes without blocking (line `steady`). Prints each thread's id and the
   CPU time the server spent on its line. With `fork`, a forked child runs all of this while the
   parent waits for it (a pre-fork server's worker); `-` in its place runs without. UNITS sets the
   server's work per request (20: ~20 us), CLIENT_UNITS the main thread's (30): the faster side
   blocks once a request. Usage: switchy [milliseconds=1500] [fork|-] [UNITS=20] [CLIENT_UNITS=30]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static int to_server[2], to_main[2];
static atomic_int stop;
static uint64_t request_cpu_ns;
static long request_units = 20;
static long client_units = 30;

static void* server(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  printf("server_tid=%ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  char c;
  while (read(to_server[0], &c, 1) == 1 && c == 'r') {
    uint64_t start = itest_thread_cpu_ns();
    WORK(acc, request_units); /* @request */
    request_cpu_ns += itest_thread_cpu_ns() - start;
    ITEST_CHECK(write(to_main[1], &c, 1) == 1, "answer");
  }
  return (void*)(uintptr_t)acc;
}

static void* steady(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  printf("steady_tid=%ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  while (!atomic_load(&stop)) WORK(acc, 200); /* @steady */
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  long ms = itest_arg(argc, argv, 1, 1500);
  request_units = itest_arg(argc, argv, 3, 20);
  client_units = itest_arg(argc, argv, 4, 30);
  if (argc > 2 && strcmp(argv[2], "fork") == 0) {
    fflush(stdout);
    pid_t child = fork();
    ITEST_CHECK(child >= 0, "fork");
    if (child > 0) {
      int status = 0;
      ITEST_CHECK(waitpid(child, &status, 0) == child, "waitpid");
      return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
    }
  }
  ITEST_CHECK(pipe(to_server) == 0 && pipe(to_main) == 0, "pipes");
  pthread_t server_thread, steady_thread;
  ITEST_CHECK(pthread_create(&server_thread, NULL, server, (void*)(uintptr_t)3) == 0, "create");
  ITEST_CHECK(pthread_create(&steady_thread, NULL, steady, (void*)(uintptr_t)5) == 0, "create");
  uint64_t end = itest_now_ns() + (uint64_t)ms * 1000000ULL;
  long requests = 0;
  char c = 'r';
  uint64_t acc = 7;
  while (itest_now_ns() < end) {
    WORK(acc, client_units); /* @client */
    ITEST_CHECK(write(to_server[1], &c, 1) == 1, "request");
    ITEST_CHECK(read(to_main[0], &c, 1) == 1, "response");
    COZ_PROGRESS_NAMED("request");
    ++requests;
  }
  c = 'q';
  ITEST_CHECK(write(to_server[1], &c, 1) == 1, "quit");
  atomic_store(&stop, 1);
  void* result;
  pthread_join(server_thread, &result);
  pthread_join(steady_thread, &result);
  printf("requests=%ld request_cpu_ms=%.1f sink=%llu\n", requests, request_cpu_ns / 1e6,
         (unsigned long long)(acc & 1));
  return 0;
}
