// Known-answer program for `whatif run --counters` (built with -finstrument-functions): functions
// that spin known amounts of thread CPU time, a recursive function, and calls from two threads.
// main: parent x10 (each: 3 ms own + leaf 2 ms), recurse(5) x3 (1 ms at the bottom), unselected x5;
// worker: parent x5, leaf x7.
#include <pthread.h>
#include <stdio.h>
#include <time.h>

__attribute__((no_instrument_function)) static long long thread_cpu_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

__attribute__((no_instrument_function)) static void spin_ns(long long ns) {
  long long end = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < end) {
  }
}

__attribute__((noinline)) void leaf(void) { spin_ns(2000000); }

__attribute__((noinline)) void parent(void) {
  spin_ns(3000000);
  leaf();
}

__attribute__((noinline)) void recurse(int depth) {
  if (depth == 0) spin_ns(1000000);
  else recurse(depth - 1);
}

__attribute__((noinline)) void unselected(void) { spin_ns(100000); }

static void* worker(void* unused) {
  (void)unused;
  for (int i = 0; i < 5; ++i) parent();
  for (int i = 0; i < 7; ++i) leaf();
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, worker, NULL);
  for (int i = 0; i < 10; ++i) parent();
  for (int i = 0; i < 3; ++i) recurse(5);
  for (int i = 0; i < 5; ++i) unselected();
  pthread_join(thread, NULL);
  printf("done\n");
  return 0;
}
