/* One thread of 200-us passes with a progress point, and in the middle of the run a phase whose CPU
   time whatif cannot sample: two threads made with a raw clone(), unknown to its thread shims, spin
   for 250 ms. Usage: unseen [milliseconds=2200] [phase start ms=800]. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <whatif.h>

#include "itest.h"

enum { kStackBytes = 1 << 16, kSpinners = 2 };
static atomic_int g_finished;

static int spin(void* arg) {
  (void)arg;
  uint64_t start = itest_now_ns(), acc = 1;
  while (itest_now_ns() - start < 250000000ULL) WORK(acc, 50);
  atomic_fetch_add(&g_finished, (int)(acc & 1) | 1);
  return 0;  /* clone()'s wrapper ends only this thread */
}

int main(int argc, char** argv) {
  uint64_t start = itest_now_ns();
  uint64_t deadline = start + (uint64_t)itest_arg(argc, argv, 1, 2200) * 1000000ULL;
  uint64_t phase = start + (uint64_t)itest_arg(argc, argv, 2, 800) * 1000000ULL;
  uint64_t acc = 1;
  long passes = 0;
  int started = 0;
  while (itest_now_ns() < deadline) {
    WORK(acc, 200); /* @pass */
    COZ_PROGRESS_NAMED("pass");
    ++passes;
    if (!started && itest_now_ns() >= phase) {
      started = 1;
      for (int i = 0; i < kSpinners; ++i) {
        char* stack = mmap(NULL, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        ITEST_CHECK(stack != MAP_FAILED, "mmap");
        int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
        ITEST_CHECK(clone(spin, stack + kStackBytes, flags, NULL) > 0, "clone: %s", strerror(errno));
      }
    }
  }
  while (atomic_load(&g_finished) < kSpinners) {
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  printf("passes=%ld spinners=%d sink=%llu\n", passes, atomic_load(&g_finished), (unsigned long long)(acc & 1));
  return 0;
}
