/* Known-answer workload: a user-space spin lock (C11 atomic_flag, no system call). Two pthreads
   repeat line A (WORK) outside the lock and line B (FLOPS) inside it; a waiter spins on the flag.
   With t_B > t_A the lock is the bottleneck: per item max(t_B, (t_A + t_B) / 2), so speeding B
   gains until it meets A, and speeding A gains nothing. The spinning waiter's time lands in the
   spin loop's line, which no speedup of A or B removes. */
#include <pthread.h>
#include <stdatomic.h>

#include "workload.h"

static atomic_flag g_lock = ATOMIC_FLAG_INIT;
static long g_done;
static double g_a, g_b;
static long g_items;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  double x = 1.0 + (double)(uintptr_t)arg;
  for (;;) {
    WORK(acc, g_a); /* @line:A */
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire)) __builtin_ia32_pause();
    if (g_done >= g_items) {
      atomic_flag_clear_explicit(&g_lock, memory_order_release);
      break;
    }
    FLOPS(x, g_b); /* @line:B */
    ++g_done;
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
    COZ_PROGRESS_NAMED("item");
  }
  return (void*)(uintptr_t)(acc + (uint64_t)x);
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 300);
  g_b = wl_arg(argc, argv, "b", 500);
  g_items = (long)wl_arg(argc, argv, "items", 2000);
  const uint64_t t0 = wl_now_ns();
  pthread_t t1, t2;
  void *r1, *r2;
  pthread_create(&t1, NULL, worker, (void*)1);
  pthread_create(&t2, NULL, worker, (void*)2);
  pthread_join(t1, &r1);
  pthread_join(t2, &r2);
  wl_report(wl_now_ns() - t0, (uint64_t)g_done, 0, (uint64_t)(uintptr_t)r1 + (uint64_t)(uintptr_t)r2);
  return 0;
}
