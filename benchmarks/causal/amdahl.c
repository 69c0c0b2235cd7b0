/* Known-answer workload: barrier-synchronised rounds with unequal threads and a serial section
   (Amdahl). Worker 0 runs line A, worker 1 line B in parallel; after a barrier worker 0 alone runs
   the serial line C. A round lasts max(t_A, t_B) + t_C. Speeding C by s gains s * t_C / round;
   speeding B gains min(s * t_B, t_B - t_A) / round; speeding A (the shorter) gains nothing. */
#include <pthread.h>

#include "workload.h"

/* Built with -DWL_TRACE (benchmarks/README.md, "Under-predicted dominant lines"), every round's
   segment times go to $TRACE at exit: the wall time of each segment and each thread's CPU time in
   its line, so a profile's experiments can be laid over the rounds (diag/rounds.py). The suite's
   build has none of it. */
#ifdef WL_TRACE
#define WL_TRACE_MAX 4000
static uint64_t g_t0[WL_TRACE_MAX][6], g_t1[WL_TRACE_MAX][5];
static uint64_t wl_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
#define TRACE(stmt) stmt
#else
#define TRACE(stmt)
#endif

static double g_a, g_b, g_c;
static long g_rounds;
static pthread_barrier_t g_barrier;
static uint64_t g_progress;

static void* worker0(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < g_rounds; ++r) {
    TRACE(uint64_t cpu = wl_thread_cpu_ns(); g_t0[r][0] = wl_now_ns());
    WORK(acc, g_a); /* @line:A */
    TRACE(g_t0[r][1] = wl_now_ns(); g_t0[r][2] = wl_thread_cpu_ns() - cpu);
    pthread_barrier_wait(&g_barrier);
    TRACE(g_t0[r][3] = wl_now_ns());
    WORK(acc, g_c); /* @line:C */
    COZ_PROGRESS_NAMED("item");
    ++g_progress;
    TRACE(g_t0[r][4] = wl_now_ns());
    pthread_barrier_wait(&g_barrier);
    TRACE(g_t0[r][5] = wl_now_ns());
  }
  return (void*)(uintptr_t)acc;
}

static void* worker1(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < g_rounds; ++r) {
    TRACE(uint64_t cpu = wl_thread_cpu_ns(); g_t1[r][0] = wl_now_ns());
    WORK(acc, g_b); /* @line:B */
    TRACE(g_t1[r][1] = wl_now_ns(); g_t1[r][2] = wl_thread_cpu_ns() - cpu);
    pthread_barrier_wait(&g_barrier);
    TRACE(g_t1[r][3] = wl_now_ns());
    pthread_barrier_wait(&g_barrier);
    TRACE(g_t1[r][4] = wl_now_ns());
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 3000);
  g_b = wl_arg(argc, argv, "b", 5000);
  g_c = wl_arg(argc, argv, "c", 2000);
  g_rounds = (long)wl_arg(argc, argv, "rounds", 300);
  TRACE(if (g_rounds > WL_TRACE_MAX) g_rounds = WL_TRACE_MAX);
  pthread_barrier_init(&g_barrier, NULL, 2);
  const uint64_t t0 = wl_now_ns();
  pthread_t t[2];
  void *r0, *r1;
  pthread_create(&t[0], NULL, worker0, (void*)(uintptr_t)1);
  pthread_create(&t[1], NULL, worker1, (void*)(uintptr_t)2);
  pthread_join(t[0], &r0);
  pthread_join(t[1], &r1);
  wl_report(wl_now_ns() - t0, g_progress, 0, (uint64_t)(uintptr_t)r0 + (uint64_t)(uintptr_t)r1);
#ifdef WL_TRACE
  const char* path = getenv("TRACE");
  FILE* out = path ? fopen(path, "w") : NULL;
  for (long r = 0; out && r < g_rounds; ++r) {
    fprintf(out, "%ld", r);
    for (int k = 0; k < 6; ++k) fprintf(out, " %" PRIu64, k == 2 ? g_t0[r][k] : g_t0[r][k] - t0);
    for (int k = 0; k < 5; ++k) fprintf(out, " %" PRIu64, k == 2 ? g_t1[r][k] : g_t1[r][k] - t0);
    fputc('\n', out);
  }
  if (out) fclose(out);
#endif
  pthread_barrier_destroy(&g_barrier);
  return 0;
}
