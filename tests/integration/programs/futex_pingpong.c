/* Ping-pong over raw futexes, the way C++20 std::atomic::wait, std::latch and Rust's std Mutex,
   Condvar and thread parking block: syscall(SYS_futex), never a pthread call. The main thread runs
   line `ping` (3 units), then wakes the partner and waits; the partner runs `pong` (1 unit) and wakes
   it back. One progress visit per round; the rounds are strictly serial, so speeding `ping` by s
   speeds the program by s * 3/4. Usage: futex_pingpong [rounds=1500]. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static atomic_int turn; /* 0: main's turn, 1: the partner's, 2: stop */

static void futex_wait_while(int value) {
  while (atomic_load(&turn) == value) syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void pass_to(int value) {
  atomic_store(&turn, value);
  syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void* partner(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  for (;;) {
    futex_wait_while(0);
    if (atomic_load(&turn) == 2) break;
    WORK(acc, 250); /* @pong */
    pass_to(0);
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
    pass_to(1);
    futex_wait_while(1);
    COZ_PROGRESS_NAMED("round");
  }
  pass_to(2);
  void* result;
  pthread_join(thread, &result);
  printf("rounds=%ld sink=%llu\n", rounds, (unsigned long long)((acc ^ (uintptr_t)result) & 1));
  return 0;
}
