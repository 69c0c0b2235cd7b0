/* Known-answer workload: a synchronous request/reply between two pthreads over atomics, each side
   waiting in a sched_yield loop (no lock, no futex), as code that polls with
   std::this_thread::yield() or Rust's yield_now does. The client runs line A (WORK) to prepare a
   request and posts it; the server runs line B (FLOPS) to answer and posts the reply. Strictly
   serial: speeding A by s gains s * t_A / (t_A + t_B), B likewise; the waiting loops' line gains
   nothing. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "workload.h"

static atomic_long g_requested, g_replied;
static double g_a, g_b;
static long g_items;

static void* server(void* arg) {
  double x = 1.0 + (double)(uintptr_t)arg;
  for (long i = 1; i <= g_items; ++i) {
    while (atomic_load_explicit(&g_requested, memory_order_acquire) < i) sched_yield();
    FLOPS(x, g_b); /* @line:B */
    atomic_store_explicit(&g_replied, i, memory_order_release);
  }
  return (void*)(uintptr_t)x;
}

int main(int argc, char** argv) {
  g_a = wl_arg(argc, argv, "a", 400);
  g_b = wl_arg(argc, argv, "b", 700);
  g_items = (long)wl_arg(argc, argv, "items", 900);
  const uint64_t t0 = wl_now_ns();
  pthread_t t;
  void* r;
  pthread_create(&t, NULL, server, (void*)1);
  uint64_t acc = 2;
  for (long i = 1; i <= g_items; ++i) {
    WORK(acc, g_a); /* @line:A */
    atomic_store_explicit(&g_requested, i, memory_order_release);
    while (atomic_load_explicit(&g_replied, memory_order_acquire) < i) sched_yield();
    COZ_PROGRESS_NAMED("item");
  }
  pthread_join(t, &r);
  wl_report(wl_now_ns() - t0, (uint64_t)g_items, 0, acc + (uint64_t)(uintptr_t)r);
  return 0;
}
