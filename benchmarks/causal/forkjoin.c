/* Known-answer workload: fork-join (the Coz paper's Figure 1). Each round forks two threads running
   line A and line B, and joins both. A round lasts max(t_A, t_B): speeding the shorter line A gains
   nothing; speeding B by s gains min(s * t_B, t_B - t_A) / max(t_A, t_B), a plateau. */
#include <pthread.h>

#include "workload.h"

static double g_a, g_b;

static void* run_a(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  WORK(acc, g_a); /* @line:A */
  return (void*)(uintptr_t)acc;
}

static void* run_b(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  WORK(acc, g_b); /* @line:B */
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 4500);
  g_b = wl_arg(argc, argv, "b", 5500);
  const long rounds = (long)wl_arg(argc, argv, "rounds", 400);
  uint64_t acc = 0, progress = 0;
  const uint64_t t0 = wl_now_ns();
  for (long r = 0; r < rounds; ++r) {
    pthread_t ta, tb;
    void *ra, *rb;
    pthread_create(&ta, NULL, run_a, (void*)(uintptr_t)(r + 1));
    pthread_create(&tb, NULL, run_b, (void*)(uintptr_t)(r + 2));
    pthread_join(ta, &ra);
    pthread_join(tb, &rb);
    acc += (uint64_t)(uintptr_t)ra + (uint64_t)(uintptr_t)rb;
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  wl_report(wl_now_ns() - t0, progress, 0, acc);
  return 0;
}
