/* Known-answer workload: Amdahl's shape with the serial part on the main thread. Per round the
   main thread runs the serial line A while two worker threads wait at a barrier; then the two
   workers each run line B (the two halves of a parallel loop) while the main thread waits at the
   next barrier. Three threads, one barrier of three, two cores: nothing overlaps the serial part.
   Round = t_A + t_B: speeding A by s gains s * t_A / round, speeding B gains s * t_B / round. Unlike
   `amdahl`, the serial line runs while *two* threads are blocked, and the thread visiting the
   progress point is not one of those running the parallel line. */
#ifdef WL_TRACE
#define _GNU_SOURCE /* sched_getcpu */
#endif
#include <pthread.h>

#include "workload.h"

/* Built with -DWL_TRACE (benchmarks/README.md, "Woken workers packed onto one CPU"), it prints to
   stderr how long the parallel phase took a round and in how many rounds both workers began B on
   the same CPU. */
#ifdef WL_TRACE
#include <sched.h>
#include <stdio.h>
#define WL_TRACE_MAX 100000
static int g_cpu[2][WL_TRACE_MAX];
#define TRACE(stmt) stmt
#else
#define TRACE(stmt)
#endif

static double g_b;
static long g_rounds;
static pthread_barrier_t g_start, g_done;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < g_rounds; ++r) {
    pthread_barrier_wait(&g_start);
    TRACE(if (r < WL_TRACE_MAX) g_cpu[(uintptr_t)arg - 1][r] = sched_getcpu());
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
  TRACE(uint64_t parallel_ns = 0);
  for (long k = 0; k < g_rounds; ++k) {
    FLOPS(x, a); /* @line:A */
    TRACE(uint64_t parallel_start = wl_now_ns());
    pthread_barrier_wait(&g_start);
    pthread_barrier_wait(&g_done);
    TRACE(parallel_ns += wl_now_ns() - parallel_start);
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  for (int i = 0; i < 2; ++i) pthread_join(t[i], &r[i]);
#ifdef WL_TRACE
  long same = 0, traced = g_rounds < WL_TRACE_MAX ? g_rounds : WL_TRACE_MAX;
  for (long k = 0; k < traced; ++k) same += g_cpu[0][k] == g_cpu[1][k];
  fprintf(stderr, "parallel phase %.0f us a round; both workers on one CPU in %ld of %ld rounds\n",
          (double)parallel_ns / 1e3 / (double)g_rounds, same, traced);
#endif
  wl_report(wl_now_ns() - t0, progress, 0, (uint64_t)x + (uint64_t)(uintptr_t)r[0] + (uint64_t)(uintptr_t)r[1]);
  pthread_barrier_destroy(&g_start);
  pthread_barrier_destroy(&g_done);
  return 0;
}
