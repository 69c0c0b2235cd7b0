/* Ping-pong over a spin-wait, the way user-space spin locks, flags and barriers wait: the waiting
   thread spins on an atomic with x86's pause and never enters the kernel. The main thread runs line
   `ping` (3 units) while the partner spins, then hands over and spins while the partner runs `pong`
   (1 unit). One progress visit per round; the rounds are strictly serial, so speeding `ping` by s
   speeds the program by s * 3/4. Built three times: spin_pingpong with the pause,
   spin_pingpong_plain (SPIN_WITHOUT_PAUSE) without, spin_pingpong_yield (SPIN_WITH_YIELD) calling
   sched_yield instead, as `while (!ready) std::this_thread::yield();` and Rust's yield_now loops
   do. Usage: spin_pingpong [rounds=1500]. */
#include <pthread.h>
#include <stdatomic.h>
#include <whatif.h>

#include "itest.h"

static atomic_int turn; /* 0: main's turn, 1: the partner's, 2: stop */

#ifdef SPIN_WITHOUT_PAUSE /* the spin_pingpong_plain build: `while (flag == value) ;`, as naive code spins */
#define SPIN_HINT() ((void)0)
#elif defined(SPIN_WITH_YIELD)
#include <sched.h>
#define SPIN_HINT() sched_yield()
#else
#define SPIN_HINT() __builtin_ia32_pause()
#endif

static void spin_while(int value) {
  while (atomic_load_explicit(&turn, memory_order_acquire) == value) SPIN_HINT(); /* @wait */
}

static void* partner(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (;;) {
    spin_while(0);
    if (atomic_load(&turn) == 2) break;
    WORK(acc, 250); /* @pong */
    atomic_store_explicit(&turn, 0, memory_order_release);
  }
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv) {
  long rounds = itest_arg(argc, argv, 1, 1500);
  pthread_t thread;
  ITEST_CHECK(pthread_create(&thread, NULL, partner, (void*)(uintptr_t)7) == 0, "create");
  uint64_t acc = 1;
  for (long i = 0; i < rounds; ++i) {
    WORK(acc, 750); /* @ping */
    atomic_store_explicit(&turn, 1, memory_order_release);
    spin_while(1);
    COZ_PROGRESS_NAMED("round");
  }
  atomic_store(&turn, 2);
  void* result;
  pthread_join(thread, &result);
  printf("rounds=%ld sink=%llu\n", rounds, (unsigned long long)((acc ^ (uintptr_t)result) & 1));
  return 0;
}
