/* Known-answer workload: Amdahl's shape with the serial part on the main thread. Per round the
   main thread runs the serial line A while two worker threads wait at a barrier; then the two
   workers each run line B (the two halves of a parallel loop) while the main thread waits at the
   next barrier. Three threads, one barrier of three, two cores: nothing overlaps the serial part.
   Round = t_A + t_B: speeding A by s gains s * t_A / round, speeding B gains s * t_B / round. Unlike
   `amdahl`, the serial line runs while *two* threads are blocked, and the thread visiting the
   progress point is not one of those running the parallel line. */
#include <pthread.h>

#include "workload.h"

static double g_b;
static long g_rounds;
static pthread_barrier_t g_start, g_done;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < g_rounds; ++r) {
    pthread_barrier_wait(&g_start);
    WORK(acc, g_b); /* @line:B */
    pthread_barrier_wait(&g_done);
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 1200);
  g_b = wl_arg(argc, argv, "b", 1500);
  g_rounds = (long)wl_arg(argc, argv, "rounds", 300);
  pthread_barrier_init(&g_start, NULL, 3);
  pthread_barrier_init(&g_done, NULL, 3);
  double x = 1.0;
  uint64_t progress = 0;
  const uint64_t t0 = wl_now_ns();
  pthread_t t[2];
  void* r[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, worker, (void*)(uintptr_t)(i + 1));
  for (long k = 0; k < g_rounds; ++k) {
    FLOPS(x, a); /* @line:A */
    pthread_barrier_wait(&g_start);
    pthread_barrier_wait(&g_done);
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  for (int i = 0; i < 2; ++i) pthread_join(t[i], &r[i]);
  wl_report(wl_now_ns() - t0, progress, 0, (uint64_t)x + (uint64_t)(uintptr_t)r[0] + (uint64_t)(uintptr_t)r[1]);
  pthread_barrier_destroy(&g_start);
  pthread_barrier_destroy(&g_done);
  return 0;
}
