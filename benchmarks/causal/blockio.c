/* Known-answer workload: blocking I/O. The main thread is a feeder that per item runs line B, then
   sleeps `sleep_us` (a slow device) and writes the item into a pipe; a reader thread blocks in read(2)
   and runs line A per item. The period is max(t_B + sleep, t_A): the feeder's sleep dominates, so
   speeding B by s gains s * t_B / (t_B + sleep), and speeding the reader's A gains nothing. */
#include <pthread.h>
#include <unistd.h>

#include "workload.h"

static double g_a;
static long g_items;
static int g_pipe[2];

static void* reader(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    uint64_t item;
    size_t got = 0;
    while (got < sizeof item) {
      ssize_t n = read(g_pipe[0], (char*)&item + got, sizeof item - got);
      if (n <= 0) return (void*)(uintptr_t)acc;
      got += (size_t)n;
    }
    acc ^= item;
    WORK(acc, g_a); /* @line:A */
    COZ_PROGRESS_NAMED("item");
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 600);
  const double b = wl_arg(argc, argv, "b", 400);
  const double sleep_us = wl_arg(argc, argv, "sleep_us", 900);
  g_items = (long)wl_arg(argc, argv, "items", 1500);
  if (pipe(g_pipe) != 0) {
    perror("pipe");
    return 1;
  }
  const uint64_t t0 = wl_now_ns();
  pthread_t tr;
  void* rr;
  pthread_create(&tr, NULL, reader, (void*)(uintptr_t)1);
  uint64_t acc = 2;
  for (long i = 0; i < g_items; ++i) {
    WORK(acc, b); /* @line:B */
    wl_sleep_us(sleep_us);
    if (write(g_pipe[1], &acc, sizeof acc) != (ssize_t)sizeof acc) {
      perror("write");
      return 1;
    }
  }
  pthread_join(tr, &rr);
  wl_report(wl_now_ns() - t0, (uint64_t)g_items, 0, acc + (uint64_t)(uintptr_t)rr);
  return 0;
}
