/* The program's own SIGPROF (setitimer ITIMER_PROF) and SIGALRM (alarm, then ITIMER_REAL)
   handlers must keep firing under the runtime. Busy for about a second of CPU time; checks the
   counts against what the kernel's timers should have delivered.
   Usage: signals [milliseconds=1200]. */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static volatile sig_atomic_t g_prof, g_alarm;
static void on_prof(int sig) { (void)sig; ++g_prof; }
static void on_alarm(int sig) { (void)sig; ++g_alarm; }

int main(int argc, char** argv) {
  long ms = itest_arg(argc, argv, 1, 1200);
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  action.sa_handler = on_prof;
  ITEST_CHECK(sigaction(SIGPROF, &action, NULL) == 0, "sigaction SIGPROF");
  ITEST_CHECK(signal(SIGALRM, on_alarm) != SIG_ERR, "signal SIGALRM");

  struct itimerval prof = {{0, 2000}, {0, 2000}}; /* every 2 ms of process CPU time */
  ITEST_CHECK(setitimer(ITIMER_PROF, &prof, NULL) == 0, "setitimer ITIMER_PROF");
  alarm(1);
  uint64_t acc = 1;
  uint64_t start = itest_now_ns();
  while (g_alarm == 0) {
    WORK(acc, 100); /* @signal-work */
    COZ_PROGRESS_NAMED("work");
    ITEST_CHECK(itest_now_ns() - start < 5000000000ULL, "alarm(1) never fired");
  }
  struct itimerval real = {{0, 20000}, {0, 20000}}; /* every 20 ms of wall time */
  ITEST_CHECK(setitimer(ITIMER_REAL, &real, NULL) == 0, "setitimer ITIMER_REAL");
  uint64_t deadline = itest_now_ns() + (uint64_t)ms * 1000000ULL / 2;
  while (itest_now_ns() < deadline) {
    WORK(acc, 100); /* @signal-work-2 */
    COZ_PROGRESS_NAMED("work");
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  setitimer(ITIMER_PROF, &off, NULL);
  struct timespec cpu;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  double cpu_ms = cpu.tv_sec * 1e3 + cpu.tv_nsec / 1e6;
  printf("prof=%d alarm=%d cpu_ms=%.0f\n", (int)g_prof, (int)g_alarm, cpu_ms);
  /* Loose bounds: the kernel may coalesce timer ticks, a loaded machine gives less CPU. */
  ITEST_CHECK(g_prof >= cpu_ms / 2.0 / 4.0 && g_prof >= 20, "SIGPROF fired %d times in %.0f ms of CPU", (int)g_prof, cpu_ms);
  ITEST_CHECK(g_alarm >= 1 + 5, "SIGALRM fired %d times", (int)g_alarm);
  return 0;
}
