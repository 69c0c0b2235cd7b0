/* Known-answer workload: barrier-synchronised rounds with unequal threads and a serial section
   (Amdahl). Worker 0 runs line A, worker 1 line B in parallel; after a barrier worker 0 alone runs
   the serial line C. A round lasts max(t_A, t_B) + t_C. Speeding C by s gains s * t_C / round;
   speeding B gains min(s * t_B, t_B - t_A) / round; speeding A (the shorter) gains nothing. */
#include <pthread.h>

#include "workload.h"

static double g_a, g_b, g_c;
static long g_rounds;
static pthread_barrier_t g_barrier;
static uint64_t g_progress;

static void* worker0(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < g_rounds; ++r) {
    WORK(acc, g_a); /* @line:A */
    pthread_barrier_wait(&g_barrier);
    WORK(acc, g_c); /* @line:C */
    COZ_PROGRESS_NAMED("item");
    ++g_progress;
    pthread_barrier_wait(&g_barrier);
  }
  return (void*)(uintptr_t)acc;
}

static void* worker1(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (long r = 0; r < g_rounds; ++r) {
    WORK(acc, g_b); /* @line:B */
    pthread_barrier_wait(&g_barrier);
    pthread_barrier_wait(&g_barrier);
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 3000);
  g_b = wl_arg(argc, argv, "b", 5000);
  g_c = wl_arg(argc, argv, "c", 2000);
  g_rounds = (long)wl_arg(argc, argv, "rounds", 300);
  pthread_barrier_init(&g_barrier, NULL, 2);
  const uint64_t t0 = wl_now_ns();
  pthread_t t[2];
  void *r0, *r1;
  pthread_create(&t[0], NULL, worker0, (void*)(uintptr_t)1);
  pthread_create(&t[1], NULL, worker1, (void*)(uintptr_t)2);
  pthread_join(t[0], &r0);
  pthread_join(t[1], &r1);
  wl_report(wl_now_ns() - t0, g_progress, 0, (uint64_t)(uintptr_t)r0 + (uint64_t)(uintptr_t)r1);
  pthread_barrier_destroy(&g_barrier);
  return 0;
}
