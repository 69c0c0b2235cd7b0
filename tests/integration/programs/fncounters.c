// Known-answer program for `whatif run --counters` (built with -finstrument-functions): functions
// that spin known amounts of thread CPU time, a recursive function, and calls from two threads.
// main: parent x10 (each: 3 ms own + leaf 2 ms), recurse(5) x3 (1 ms at the bottom), unselected x5;
// worker: parent x5, leaf x7.
// `fncounters reload DIR` (for `whatif ctl PID reload`): leaf x5, then writes DIR/pid and waits for
// DIR/go, then leaf x5 and parent x4, on the main thread only.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

__attribute__((no_instrument_function)) static int reload_phases(const char* dir) {
  char path[4096];
  for (int i = 0; i < 5; ++i) leaf();
  snprintf(path, sizeof(path), "%s/pid.tmp", dir);
  FILE* out = fopen(path, "w");
  if (out == NULL) return 1;
  fprintf(out, "%d\n", (int)getpid());
  fclose(out);
  char final_path[4096];
  snprintf(final_path, sizeof(final_path), "%s/pid", dir);
  rename(path, final_path);
  snprintf(path, sizeof(path), "%s/go", dir);
  for (int waited = 0; access(path, F_OK) != 0; ++waited) {
    if (waited > 6000) return 1;  // 60 s
    struct timespec pause = {0, 10000000};
    nanosleep(&pause, NULL);
  }
  for (int i = 0; i < 5; ++i) leaf();
  for (int i = 0; i < 4; ++i) parent();
  printf("done\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "reload") == 0) return reload_phases(argv[2]);
  pthread_t thread;
  pthread_create(&thread, NULL, worker, NULL);
  for (int i = 0; i < 10; ++i) parent();
  for (int i = 0; i < 3; ++i) recurse(5);
  for (int i = 0; i < 5; ++i) unselected();
  pthread_join(thread, NULL);
  printf("done\n");
  return 0;
}
