/* Pipe wake-ups: a producer thread computes each item (the line to speed up) and writes a byte to a
   pipe; the consumer waits in read(2) for it, then does a little work of its own. The consumer is
   woken by a thread of the program, so it is credited, not delayed. Usage: pipe_wake [items=3000].
   Exits non-zero if a byte is lost. */
#include <pthread.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static int g_pipe[2];
static long g_items;

static void* producer(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    WORK(acc, 200); /* @produce */
    ITEST_CHECK(write(g_pipe[1], "x", 1) == 1, "write");
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_items = itest_arg(argc, argv, 1, 3000);
  ITEST_CHECK(pipe(g_pipe) == 0, "pipe");
  pthread_t thread;
  ITEST_CHECK(pthread_create(&thread, NULL, producer, (void*)(uintptr_t)7) == 0, "create");
  uint64_t acc = 3;
  for (long i = 0; i < g_items; ++i) {
    char byte = 0;
    ITEST_CHECK(read(g_pipe[0], &byte, 1) == 1 && byte == 'x', "read item %ld", i);
    WORK(acc, 10); /* @consume */
    COZ_PROGRESS_NAMED("item");
  }
  void* result = NULL;
  pthread_join(thread, &result);
  printf("items=%ld sink=%llu\n", g_items, (unsigned long long)((acc ^ (uintptr_t)result) & 1));
  return 0;
}
