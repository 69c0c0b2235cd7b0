/* Blocks every signal before creating its threads (a common daemon pattern) and hands SIGUSR1 to a
   thread waiting in sigwait. The runtime's sampling signal must still get through. Prints the CPU
   time its two workers used, to compare with the samples they got.
   Usage: masked [milliseconds=1200]. */
#include <pthread.h>
#include <signal.h>
#include <whatif.h>

#include "itest.h"

static uint64_t g_deadline;

static void* worker(void* arg) {
  uint64_t acc = (uint64_t)(uintptr_t)arg;
  while (itest_now_ns() < g_deadline) {
    WORK(acc, 300); /* @masked-work */
    COZ_PROGRESS_NAMED("work");
  }
  struct timespec cpu;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  (void)acc;
  return (void*)(uintptr_t)(cpu.tv_sec * 1000 + cpu.tv_nsec / 1000000); /* CPU milliseconds */
}

static void* waiter(void* arg) {
  (void)arg;
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGUSR1);
  int sig = 0;
  ITEST_CHECK(sigwait(&wanted, &sig) == 0, "sigwait");
  return (void*)(long)sig;
}

int main(int argc, char** argv) {
  g_deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 1, 1200) * 1000000ULL;
  sigset_t all;
  sigfillset(&all);
  ITEST_CHECK(pthread_sigmask(SIG_SETMASK, &all, NULL) == 0, "pthread_sigmask");
  ITEST_CHECK(sigprocmask(SIG_BLOCK, &all, NULL) == 0, "sigprocmask");
  pthread_t threads[2], wait_thread;
  pthread_create(&wait_thread, NULL, waiter, NULL);
  for (long i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, worker, (void*)(i + 1));
  long cpu_ms = 0;
  for (int i = 0; i < 2; ++i) {
    void* ms = NULL;
    pthread_join(threads[i], &ms);
    cpu_ms += (long)ms;
  }
  ITEST_CHECK(pthread_kill(wait_thread, SIGUSR1) == 0, "pthread_kill");
  void* sig = NULL;
  pthread_join(wait_thread, &sig);
  ITEST_CHECK((long)sig == SIGUSR1, "sigwait returned signal %ld", (long)sig);
  printf("masked ok worker_cpu_ms=%ld\n", cpu_ms);
  return 0;
}
